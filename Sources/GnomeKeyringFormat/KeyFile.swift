/// A GLib key file (the `.desktop`/`.ini` like text gnome-keyring writes for keyrings without a
/// password): `[group]` headers, `key=value` lines, `#` comments. String values unescape
/// `\s`, `\n`, `\t`, `\r` and `\\`.
struct KeyFile {
    /// Group names in file order.
    private(set) var groups: [String] = []
    private var values: [String: [String: String]] = [:]

    init(_ text: String) throws(GnomeKeyringFileError) {
        var current: String?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]"), trimmed.count >= 3 else { throw .damaged("line \(number + 1) is not a group header") }
                let name = String(trimmed.dropFirst().dropLast())
                if values[name] == nil { groups.append(name) }
                values[name, default: [:]] = values[name, default: [:]]
                current = name
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else {
                throw .damaged("line \(number + 1) is neither a group header nor key=value")
            }
            let key = line[..<equals].trimmingSpaces
            let value = line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            values[current]?[String(key)] = String(value)
        }
    }

    /// The raw value of `key` in `group`.
    func value(_ group: String, _ key: String) -> String? { values[group]?[key] }

    /// The value of `key` in `group`, unescaped.
    func string(_ group: String, _ key: String) throws(GnomeKeyringFileError) -> String? {
        guard let raw = value(group, key) else { return nil }
        var out = ""
        var escaped = false
        for character in raw {
            if escaped {
                switch character {
                case "s": out.append(" ")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "\\": out.append("\\")
                default: throw .damaged("[\(group)] \(key) has an unknown escape \\\(character)")
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The value of `key` in `group` as an unsigned number (nil when absent).
    func number(_ group: String, _ key: String) throws(GnomeKeyringFileError) -> UInt64? {
        guard let raw = value(group, key) else { return nil }
        guard let number = UInt64(raw.trimmingSpaces) else { throw .damaged("[\(group)] \(key) is not a number") }
        return number
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
