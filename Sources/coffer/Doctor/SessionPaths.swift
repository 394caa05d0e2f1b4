import FoundationEssentials
import SystemKit

/// The directories of this session as the XDG Base Directory specification defines them
/// (relative paths in the variables are ignored, as it says), and the current desktops.
struct SessionPaths {
    let environment: [String: String]

    var home: String { environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileSystem.homeDirectoryOfThisUser() }
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    var dataHome: String { absolute("XDG_DATA_HOME") ?? home + "/.local/share" }
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    var configHome: String { absolute("XDG_CONFIG_HOME") ?? home + "/.config" }
    /// `$XDG_DATA_DIRS`, else /usr/local/share and /usr/share.
    var dataDirs: [String] { list("XDG_DATA_DIRS") ?? ["/usr/local/share", "/usr/share"] }
    /// `$XDG_CONFIG_DIRS`, else /etc/xdg.
    var configDirs: [String] { list("XDG_CONFIG_DIRS") ?? ["/etc/xdg"] }
    var runtimeDirectory: String? { absolute("XDG_RUNTIME_DIR") }
    /// `$XDG_CURRENT_DESKTOP`: the desktops this session belongs to, most specific first.
    var desktops: [String] { (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map(String.init) }

    /// `$XDG_DESKTOP_PORTAL_DIR`: where xdg-desktop-portal then reads its backends and its
    /// configuration, and nowhere else.
    var portalOverride: String? { environment["XDG_DESKTOP_PORTAL_DIR"].flatMap { $0.isEmpty ? nil : $0 } }

    /// `~/…` for a path in the home directory (for fix lines that read naturally).
    func tilde(_ path: String) -> String {
        path.hasPrefix(home + "/") ? "~" + path.dropFirst(home.count) : path
    }

    private func absolute(_ name: String) -> String? {
        guard let value = environment[name], value.hasPrefix("/") else { return nil }
        return Self.normalized(value)
    }

    private func list(_ name: String) -> [String]? {
        let entries = (environment[name] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return entries.isEmpty ? nil : entries.map(Self.normalized)
    }

    /// Without trailing slashes (so that /usr/share/ and /usr/share are the same directory).
    static func normalized(_ path: String) -> String {
        var result = path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// The file names in `directory`, sorted; none when it cannot be read.
    static func names(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}
