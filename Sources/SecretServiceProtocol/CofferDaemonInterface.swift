import DBusKit

/// `org.coffer.Daemon` at `/org/coffer/Daemon`: what cofferd tells of itself, for
/// `coffer doctor` and `cofferd --stop`. cofferd is non-dumpable (no program of its user may
/// read its memory), so /proc hides its executable and environment from the user's programs;
/// it says here what they need. Read-only properties, none of them secret. Not part of the
/// Secret Service: other providers do not have it.
public enum CofferDaemonInterface {
    public static let name = "org.coffer.Daemon"
    public static let path: ObjectPath = "/org/coffer/Daemon"

    public static let description = InterfaceDescription(name, properties: [
        PropertyDescription(Property.version, .string),
        PropertyDescription(Property.executable, .string),
        PropertyDescription(Property.dataDirectory, .string),
        PropertyDescription(Property.pinentryProgram, .string),
        PropertyDescription(Property.pinentryEnvironment, .stringDictionary),
        PropertyDescription(Property.collections, CollectionAccessSummary.signature),
        PropertyDescription(Property.longestDispatch, .uint64),
        PropertyDescription(Property.syncProblems, .stringDictionary),
    ])

    public enum Property {
        /// Coffer's version (`CofferVersion.current`).
        public static let version = "Version"
        /// The program file it runs (its `/proc/self/exe`).
        public static let executable = "Executable"
        /// The store directory it serves.
        public static let dataDirectory = "DataDirectory"
        /// The pinentry program it was told to use (`--pinentry`, `$COFFER_PINENTRY`); empty
        /// when it chooses one itself.
        public static let pinentryProgram = "PinentryProgram"
        /// The variables of its environment that choose and place a pinentry (`pinentryVariables`).
        public static let pinentryEnvironment = "PinentryEnvironment"
        /// Each unlocked collection's policy and how many of its items no verified application
        /// owns (`CollectionAccessSummary`); locked collections are left out.
        public static let collections = "Collections"
        /// The longest its D-Bus loop has spent on one call or piece of work since it started,
        /// in microseconds: how long another client's call may have waited behind one.
        public static let longestDispatch = "LongestDispatchMicroseconds"
        /// What is wrong with each synced collection's syncing, as its last round found
        /// (`SyncProblems`): a collection id, and its problems one per line; a collection
        /// that syncs well is left out.
        public static let syncProblems = "SyncProblems"
    }

    /// The environment variables `PinentryEnvironment` carries: where a prompt can be shown
    /// and where the program is looked up.
    public static let pinentryVariables = ["DISPLAY", "WAYLAND_DISPLAY", "GPG_TTY", "PATH"]
}

/// What cofferd tells of itself (`CofferDaemonInterface`): served by cofferd, read by
/// `coffer doctor` and `cofferd --stop`.
public struct CofferDaemonDescription: Sendable, Equatable {
    public var version: String
    public var executable: String
    public var dataDirectory: String
    /// The pinentry program it was told to use; nil when it chooses one.
    public var pinentryProgram: String?
    /// Its pinentry's environment: only `CofferDaemonInterface.pinentryVariables` are kept.
    public var pinentryEnvironment: [String: String]

    public init(version: String, executable: String, dataDirectory: String, pinentryProgram: String?,
                pinentryEnvironment: [String: String]) {
        self.version = version
        self.executable = executable
        self.dataDirectory = dataDirectory
        self.pinentryProgram = pinentryProgram.flatMap { $0.isEmpty ? nil : $0 }
        self.pinentryEnvironment = pinentryEnvironment.filter { CofferDaemonInterface.pinentryVariables.contains($0.key) }
    }

    /// The value of property `name` (one of `CofferDaemonInterface.Property`), nil for another.
    public func value(of name: String) -> DBusValue? {
        typealias P = CofferDaemonInterface.Property
        return switch name {
        case P.version: .string(version)
        case P.executable: .string(executable)
        case P.dataDirectory: .string(dataDirectory)
        case P.pinentryProgram: .string(pinentryProgram ?? "")
        case P.pinentryEnvironment: .stringDictionary(pinentryEnvironment)
        default: nil
        }
    }

    /// Asks `owner` (a unique name) on `connection` for its description: an error when it is
    /// not cofferd (it has no such interface) or does not answer as cofferd does.
    public static func read(from owner: String, on connection: DBusConnection,
                            timeout: Duration = .seconds(5)) throws(DBusError) -> CofferDaemonDescription {
        typealias P = CofferDaemonInterface.Property
        let reply = try connection.call(destination: owner, path: CofferDaemonInterface.path, interface: StandardInterface.properties,
                                        member: "GetAll", arguments: [.string(CofferDaemonInterface.name)], timeout: timeout)
        guard reply.count == 1, let values = reply[0].variantDictionary,
              let version = values[P.version]?.string, let executable = values[P.executable]?.string,
              let dataDirectory = values[P.dataDirectory]?.string, let program = values[P.pinentryProgram]?.string,
              let environment = values[P.pinentryEnvironment]?.stringDictionary else {
            throw .failed("\(owner) does not describe itself as cofferd does (\(CofferDaemonInterface.name))")
        }
        return CofferDaemonDescription(version: version, executable: executable, dataDirectory: dataDirectory,
                                       pinentryProgram: program, pinentryEnvironment: environment)
    }
}

/// What `org.coffer.Daemon.Collections` says of one unlocked collection: its policy, and how
/// many of its items no verified application owns (imported, made before Coffer recorded
/// creators, or made by an unverified process): under `ask`, every application is asked
/// about those; where no dialog can be shown, refused.
public struct CollectionAccessSummary: Sendable, Equatable {
    public var policy: String
    public var itemsWithoutOwner: UInt32

    public init(policy: String, itemsWithoutOwner: UInt32) {
        self.policy = policy
        self.itemsWithoutOwner = itemsWithoutOwner
    }

    /// `a{s(su)}`: collection id to (policy, items without an owner).
    public static let signature: Signature = "a{s(su)}"

    /// The property's value for `summaries` (by collection id).
    public static func value(_ summaries: [String: CollectionAccessSummary]) -> DBusValue {
        .dictionary(keySignature: .string, valueSignature: "(su)", summaries.sorted { $0.key < $1.key }.map { id, summary in
            DBusValue.DictionaryEntry(key: .string(id), value: .structure([.string(summary.policy), .uint32(summary.itemsWithoutOwner)]))
        })
    }

    /// Asks `owner` (cofferd) for the summaries; an error when it does not answer as cofferd does.
    public static func read(from owner: String, on connection: DBusConnection,
                            timeout: Duration = .seconds(5)) throws(DBusError) -> [String: CollectionAccessSummary] {
        let reply = try connection.call(destination: owner, path: CofferDaemonInterface.path, interface: StandardInterface.properties,
                                        member: "Get", arguments: [.string(CofferDaemonInterface.name),
                                                                   .string(CofferDaemonInterface.Property.collections)],
                                        timeout: timeout)
        guard reply.count == 1, case .variant(.dictionary(_, _, let entries)) = reply[0] else {
            throw .failed("\(owner) does not describe its collections as cofferd does")
        }
        var summaries: [String: CollectionAccessSummary] = [:]
        for entry in entries {
            guard case .string(let id) = entry.key, case .structure(let fields) = entry.value, fields.count == 2,
                  case .string(let policy) = fields[0], case .uint32(let count) = fields[1] else {
                throw .failed("\(owner) does not describe its collections as cofferd does")
            }
            summaries[id] = CollectionAccessSummary(policy: policy, itemsWithoutOwner: count)
        }
        return summaries
    }
}

/// What cofferd reports of its synced collections' syncing (`CofferDaemonInterface.Property.syncProblems`):
/// damaged or foreign device files, conflicting copies, and why syncing stopped if it did.
public enum SyncProblems {
    public static func value(_ problems: [String: [String]]) -> DBusValue {
        .stringDictionary(problems.filter { !$0.value.isEmpty }.mapValues { $0.joined(separator: "\n") })
    }

    /// Asks `owner` (a unique name) on `connection`.
    public static func read(from owner: String, on connection: DBusConnection,
                            timeout: Duration = .seconds(5)) throws(DBusError) -> [String: [String]] {
        let reply = try connection.call(destination: owner, path: CofferDaemonInterface.path, interface: StandardInterface.properties,
                                        member: "Get", arguments: [.string(CofferDaemonInterface.name),
                                                                   .string(CofferDaemonInterface.Property.syncProblems)],
                                        timeout: timeout)
        guard reply.count == 1, case .variant(let value) = reply[0], let problems = value.stringDictionary else {
            throw .failed("\(owner) does not report its syncing as cofferd does")
        }
        return problems.mapValues { $0.split(separator: "\n").map(String.init) }
    }
}
