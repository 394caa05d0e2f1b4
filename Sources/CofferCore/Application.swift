/// The application a process belongs to, as the service identifies it from the kernel and the
/// bus, never from anything the process says about itself.
///
/// A sandboxed process is its sandbox's application (a Flatpak app id, a snap name); any other
/// process is its executable, by path. Every process running the same executable is the same
/// application, so an interpreter (`/usr/bin/python3`) is one application for all its scripts.
/// A process whose executable cannot be read (one that made itself non-dumpable, as ssh-agent
/// does) is *unverified*: named by the command name it gives itself, which proves nothing, so
/// it is never an item's owner and never holds a grant (`isVerified`).
public struct Application: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// A Flatpak app, named by its app id (from the sandbox's `/.flatpak-info`).
        case flatpak
        /// A snap, named by the snap's name (from its cgroup or AppArmor label).
        case snap
        /// An unsandboxed program, named by the absolute path of its executable.
        case executable = "exe"
        /// A process the service could not verify (its executable cannot be read), named by the
        /// command name it gives itself (`/proc/PID/comm`). Served as far as the collection's
        /// policy serves anyone; never an owner, never granted.
        case unverified
    }

    public let kind: Kind
    public let name: String

    /// Fails on an empty name, a name with control characters, or an executable name that is
    /// not an absolute path.
    public init?(kind: Kind, name: String) {
        guard !name.isEmpty, name.utf8.count <= 4096, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return nil
        }
        if kind == .executable, !name.hasPrefix("/") { return nil }
        self.kind = kind
        self.name = name
    }

    /// Parses `encoded`'s form: `flatpak:org.example.App`, `snap:name`, `exe:/usr/bin/program`.
    /// A bare absolute path is read as an executable.
    public init?(encoded: String) {
        if encoded.hasPrefix("/") {
            self.init(kind: .executable, name: encoded)
            return
        }
        guard let colon = encoded.firstIndex(of: ":"), let kind = Kind(rawValue: String(encoded[..<colon])) else { return nil }
        self.init(kind: kind, name: String(encoded[encoded.index(after: colon)...]))
    }

    /// Whether the service could tell which program this is: false for an unverified process,
    /// whose name is only what it calls itself.
    public var isVerified: Bool { kind != .unverified }

    /// An unverified process calling itself `commandName` (its `comm`, which may be anything
    /// the process chose): control characters become `?`, an empty name is `?`.
    public static func unverified(commandName: String) -> Application {
        let cleaned = String(String.UnicodeScalarView(commandName.unicodeScalars.prefix(64).map {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0
        }))
        return Application(kind: .unverified, name: cleaned.isEmpty ? "?" : cleaned)!
    }

    /// The form `init?(encoded:)` reads and the store keeps.
    public var encoded: String { "\(kind.rawValue):\(name)" }

    /// How a person is shown the application: the path of a program, or the sandboxed app's
    /// name and what kind of sandbox it runs in.
    public var description: String {
        switch kind {
        case .flatpak: "\(name) (Flatpak)"
        case .snap: "\(name) (snap)"
        case .executable: name
        case .unverified: "an unverified process calling itself '\(name)'"
        }
    }

    /// What the rule for `init?(encoded:)` is, for messages about a name that breaks it.
    public static let rule = "flatpak:APP-ID, snap:NAME, or the absolute path of a program (exe:/usr/bin/NAME or just /usr/bin/NAME)"
}
