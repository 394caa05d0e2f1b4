/// A key file: the INI-like text of freedesktop `.desktop`, `.service` and `.portal` files, of
/// GLib key files (gnome-keyring's unencrypted keyrings, Flatpak's `/.flatpak-info`) and of
/// Coffer's settings file. `[group]` headers, `key=value` entries, blank lines and `#`
/// comments; lines end in `\n` or `\r\n`. The one reader of all of them: what a line that is
/// none of these means (damage, or nothing) is each caller's to decide, from `problems`.
public struct KeyFile: Sendable {
    /// One line as the reader sees it.
    public enum Line: Equatable, Sendable {
        /// Empty, blanks only, or a `#` comment.
        case blank
        /// `[name]`: what is between the brackets, blanks around it dropped.
        case group(String)
        /// `key = value`: the key without the blanks around it; the value without those before
        /// it (a GLib key file keeps those after it: see `untrimmedValue`).
        case entry(key: String, value: String)
        /// None of these: a `[` without its `]`, a line without `=`, an empty key.
        case malformed

        public init(_ text: Substring) {
            let line = text.hasSuffix("\r") ? text.dropLast() : text
            let content = line.drop { Self.isBlank($0) }
            if content.isEmpty || content.hasPrefix("#") {
                self = .blank
            } else if content.hasPrefix("[") {
                let inner = Self.trimmed(content.dropFirst())
                self = inner.hasSuffix("]") ? .group(Self.trimmed(inner.dropLast())) : .malformed
            } else if let equals = content.firstIndex(of: "="), case let key = Self.trimmed(content[..<equals]), !key.isEmpty {
                self = .entry(key: key, value: String(content[content.index(after: equals)...].drop { Self.isBlank($0) }))
            } else {
                self = .malformed
            }
        }

        static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

        /// `text` without spaces and tabs at either end.
        public static func trimmed(_ text: Substring) -> String {
            String(text.drop { isBlank($0) }.reversed().drop { isBlank($0) }.reversed())
        }
    }

    /// A line that is not what a key file has, or an entry before any group.
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        /// From 1.
        public let line: Int
        public let reason: String

        public var description: String { "line \(line): \(reason)" }
    }

    /// The groups in file order, each once.
    public private(set) var groups: [String] = []
    /// Every line that is neither blank, a group nor an entry in a group.
    public private(set) var problems: [Problem] = []
    private var values: [String: [String: String]] = [:]

    /// Splits `text` into its lines (`\n` or `\r\n`, which Swift counts as one character),
    /// each as `Line` reads it.
    public static func lines(of text: String) -> [Line] {
        splitLines(text).map(Line.init)
    }

    /// `text`'s lines, without their `\n` or `\r\n`.
    public static func splitLines(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }

    /// Reads `text`. A key given twice in a group keeps its last value; a group given twice
    /// is one group.
    public init(_ text: String) {
        var current: String?
        for (index, line) in Self.lines(of: text).enumerated() {
            switch line {
            case .blank:
                continue
            case .group(let name):
                if values[name] == nil {
                    groups.append(name)
                    values[name] = [:]
                }
                current = name
            case .entry(let key, let value):
                guard let current else {
                    problems.append(Problem(line: index + 1, reason: "'\(key)' comes before any [group]"))
                    continue
                }
                values[current]?[key] = value
            case .malformed:
                problems.append(Problem(line: index + 1, reason: "not 'key = value', a [group] or a # comment"))
            }
        }
    }

    /// Reads the file at `path`; nil when it cannot be read or is not UTF-8.
    public init?(path: String) {
        guard let bytes = try? FileSystem.contents(of: path), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self.init(text)
    }

    public func hasGroup(_ group: String) -> Bool { values[group] != nil }

    /// The value of `key` in `group`, without the blanks around it.
    public func value(_ key: String, in group: String) -> String? {
        values[group]?[key].map { Line.trimmed(Substring($0)) }
    }

    /// The value of `key` in `group` as a GLib key file has it: blanks after it kept.
    public func untrimmedValue(_ key: String, in group: String) -> String? { values[group]?[key] }

    /// A `;`-separated list value, without empty entries.
    public func list(_ key: String, in group: String) -> [String]? {
        value(key, in: group).map { $0.split(separator: ";").map { Line.trimmed($0) }.filter { !$0.isEmpty } }
    }

    /// The keys of `group` (unordered).
    public func keys(in group: String) -> [String] { values[group].map { Array($0.keys) } ?? [] }

    /// Whether a boolean key is `true`.
    public func isTrue(_ key: String, in group: String) -> Bool { value(key, in: group) == "true" }
}
