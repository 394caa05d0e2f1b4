import SystemKit

/// A freedesktop key file (D-Bus .service files, .desktop files, .portal files, portals.conf):
/// `[group]` headers and `key=value` lines; `#` starts a comment line. A key given twice keeps
/// its last value.
struct KeyFile {
    let path: String
    private var groups: [String: [String: String]] = [:]

    /// Reads and parses `path`; nil when it cannot be read.
    init?(path: String) {
        guard let bytes = try? FileSystem.contents(of: path) else { return nil }
        self.path = path
        var group: String?
        for rawLine in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = String(rawLine).trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast())
                group = name
                groups[name, default: [:]] = groups[name] ?? [:]
            } else if let group, let equals = line.firstIndex(of: "=") {
                let key = String(line[..<equals]).trimmingWhitespace()
                groups[group, default: [:]][key] = String(line[line.index(after: equals)...]).trimmingWhitespace()
            }
        }
    }

    func hasGroup(_ group: String) -> Bool { groups[group] != nil }

    func value(_ key: String, in group: String) -> String? { groups[group]?[key] }

    /// A `;`-separated list value, without empty entries.
    func list(_ key: String, in group: String) -> [String]? {
        value(key, in: group).map { $0.split(separator: ";").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty } }
    }

    /// The keys of `group` (unordered).
    func keys(in group: String) -> [String] { groups[group].map { Array($0.keys) } ?? [] }

    /// Whether a boolean key is `true`.
    func isTrue(_ key: String, in group: String) -> Bool { value(key, in: group) == "true" }
}
