import CofferCore
import CofferCrypto

/// Collections as a Coffer backup holds them: everything needed to restore them exactly.
public struct Backup: Sendable {
    public struct Collection: Sendable {
        public var id: CollectionID
        public var label: String
        public var created: UInt64
        public var modified: UInt64
        public var items: [Item]

        public init(id: CollectionID, label: String, created: UInt64, modified: UInt64, items: [Item]) {
            self.id = id
            self.label = label
            self.created = created
            self.modified = modified
            self.items = items
        }
    }

    public struct Item: Sendable {
        public var label: String
        public var attributes: [String: String]
        public var secret: Secret
        public var created: UInt64
        public var modified: UInt64

        public init(label: String, attributes: [String: String], secret: Secret, created: UInt64, modified: UInt64) {
            self.label = label
            self.attributes = attributes
            self.secret = secret
            self.created = created
            self.modified = modified
        }

        /// The item to add when restoring.
        public var newItem: NewItem {
            NewItem(label: label, attributes: attributes, secret: secret, times: (created, modified))
        }
    }

    public var collections: [Collection]
    /// Alias name to collection id.
    public var aliases: [String: CollectionID]

    public init(collections: [Collection], aliases: [String: CollectionID]) {
        self.collections = collections
        self.aliases = aliases
    }
}

/// Why a backup could not be read.
public enum BackupError: Error, Equatable, CustomStringConvertible {
    case notABackup
    case unsupportedVersion(UInt32)
    /// The passphrase does not open it, or it was altered (the two cannot be told apart).
    case wrongPassphrase
    case damaged(String)

    public var description: String {
        switch self {
        case .notABackup: "this is not a Coffer backup"
        case .unsupportedVersion(let version): "this backup has format version \(version); this coffer reads version \(BackupFile.version) (use a newer coffer)"
        case .wrongPassphrase: "the passphrase does not open this backup (or the file was altered)"
        case .damaged(let what): "the backup is damaged: \(what)"
        }
    }
}
