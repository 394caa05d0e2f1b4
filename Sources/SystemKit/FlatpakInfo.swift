/// The `/.flatpak-info` file Flatpak puts at the root of every sandbox it starts: a GKeyFile
/// (INI-like) whose `[Application]` group names the app (`name=org.example.App`). A sandbox
/// that runs only a runtime has a `[Runtime]` group instead, and no app id.
public enum FlatpakInfo {
    /// The largest file read as one; anything bigger is no Flatpak identity (Flatpak's own
    /// files are a few hundred bytes).
    public static let sizeLimit = 64 * 1024

    /// The app id `contents` names (the last `name=` of its `[Application]` group, as GKeyFile
    /// reads it), or nil: for a runtime-only sandbox, an id that is not a valid Flatpak app id,
    /// and anything that is not a key file (binary data, NUL bytes, invalid UTF-8, a line that
    /// is neither a group, a key, a comment nor blank, or more than `sizeLimit` bytes).
    public static func applicationID(in contents: [UInt8]) -> String? {
        guard contents.count <= sizeLimit, !contents.contains(0),
              let text = String(validating: contents, as: UTF8.self) else { return nil }
        let file = KeyFile(text)
        guard file.problems.isEmpty, file.groups.allSatisfy({ !$0.isEmpty }) else { return nil }
        guard let name = file.value("name", in: "Application"), isValidApplicationID(name) else { return nil }
        return name
    }

    /// Flatpak's rule for app ids (`flatpak_is_valid_name`): at most 255 bytes, at least three
    /// dot-separated elements, each of `A-Z a-z 0-9 _` not starting with a digit; the last may
    /// also hold `-`.
    public static func isValidApplicationID<S: StringProtocol>(_ id: S) -> Bool {
        guard id.utf8.count <= 255 else { return false }
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard elements.count >= 3 else { return false }
        for (index, element) in elements.enumerated() {
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            let isLast = index == elements.count - 1
            for scalar in element.unicodeScalars {
                let ok = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "_" || (isLast && scalar == "-")
                guard ok else { return false }
            }
        }
        return true
    }

}
