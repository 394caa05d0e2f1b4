/// Where snapd marks the processes of a snap: the AppArmor label it confines each app and hook
/// with (`snap.NAME.APP`, `snap.NAME.hook.HOOK`), and the systemd unit it runs them in
/// (`snap.NAME.APP.service`, `snap.NAME.APP-UUID.scope`, formerly `snap.NAME.APP.UUID.scope`).
///
/// The label is the trustworthy one: a process cannot give itself another AppArmor profile,
/// while any process may ask its user's systemd for a scope of any name.
public enum SnapLabel {
    /// What the AppArmor label in `/proc/PID/attr/current` says, as read from the file.
    public enum SecurityLabel: Equatable, Sendable {
        /// Confined (in any mode) by the profile of this snap.
        case snap(String)
        /// An AppArmor label, but no snap's (`unconfined`, or another profile).
        case notSnap
        /// Not an AppArmor label (no security module, or another one such as SELinux).
        case unknown
    }

    /// Reads the text of `/proc/PID/attr/current` (or `attr/apparmor/current`): a label, then
    /// for a confined process its mode in parentheses (`snap.firefox.firefox (enforce)`).
    public static func securityLabel(_ text: String) -> SecurityLabel {
        var label = Substring(text)
        while let last = label.last, last == "\n" || last == "\0" || last == " " { label = label.dropLast() }
        var hasMode = false
        if label.hasSuffix(")"), let open = label.ranges(of: " (").last {
            let mode = label[open.upperBound..<label.index(before: label.endIndex)]
            guard !mode.isEmpty, mode.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) else { return .unknown }
            hasMode = true
            label = label[..<open.lowerBound]
        }
        if !hasMode { return label == "unconfined" ? .notSnap : .unknown }
        guard label.hasPrefix("snap.") else { return .notSnap }
        let parts = label.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts.dropFirst(2).allSatisfy({ !$0.isEmpty }), isValidInstanceName(parts[1]) else {
            return .notSnap
        }
        return .snap(String(parts[1]))
    }

    /// The snap whose service or scope the process runs in, from the text of
    /// `/proc/PID/cgroup` (its unified `0::` line, or the `name=systemd` line of a cgroup v1
    /// hierarchy); nil when it runs in none.
    public static func snapName(fromCgroups text: String) -> String? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, (fields[0] == "0" && fields[1].isEmpty) || fields[1] == "name=systemd" else { continue }
            let leaf = fields[2].split(separator: "/").last ?? ""
            let unit: Substring
            if leaf.hasSuffix(".service") {
                unit = leaf.dropLast(".service".count)
            } else if leaf.hasSuffix(".scope") {
                unit = leaf.dropLast(".scope".count)
            } else {
                continue
            }
            guard unit.hasPrefix("snap.") else { continue }
            let parts = unit.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 3, !parts[2].isEmpty, isValidInstanceName(parts[1]) else { continue }
            return String(parts[1])
        }
        return nil
    }

    /// snapd's rule for a snap instance name: a name of at most 40 characters of `a-z 0-9 -`
    /// with at least one letter, no hyphen at either end and no two in a row; then optionally
    /// `_` and an instance key of 1 to 10 characters of `a-z 0-9`.
    public static func isValidInstanceName<S: StringProtocol>(_ instance: S) -> Bool {
        let pieces = instance.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        let name = pieces[0]
        guard (1...40).contains(name.count), !name.hasPrefix("-"), !name.hasSuffix("-"), !name.contains("--"),
              name.unicodeScalars.contains(where: { ("a"..."z").contains($0) }),
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else {
            return false
        }
        guard pieces.count == 2 else { return true }
        let key = pieces[1]
        return (1...10).contains(key.count)
            && key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }
}
