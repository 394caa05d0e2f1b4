import CofferCore
import CofferCrypto

/// Collections as a Coffer backup holds them: everything needed to restore them exactly —
/// items with their secrets and creators, each collection's access policy and grants — and
/// the aliases naming them.
public struct Backup: Sendable {
    /// One collection: its items, in order, and its access rules.
    public struct Collection: Sendable {
        public var id: CollectionID
        public var label: String
        public var created: UInt64
        public var modified: UInt64
        public var items: [Item]
        /// Who may read its secrets without asking; nil: not recorded (a version 1 backup, which
        /// cannot tell a collection that was `open` in a Coffer without policies from one that
        /// was `ask` or `strict` in one that had them, so the restorer chooses).
        public var policy: AccessPolicy?
        /// The grants given in it, each pointing at its item by position in `items`.
        public var grants: [Grant]

        public init(id: CollectionID, label: String, created: UInt64, modified: UInt64, items: [Item],
                    policy: AccessPolicy?, grants: [Grant] = []) {
            self.id = id
            self.label = label
            self.created = created
            self.modified = modified
            self.items = items
            self.policy = policy
            self.grants = grants
        }
    }

    /// One item, with its secret and the application that created it.
    public struct Item: Sendable {
        public var label: String
        public var attributes: [String: String]
        public var secret: Secret
        public var created: UInt64
        public var modified: UInt64
        /// The application that created it; nil: not known (not recorded in the store, or a
        /// version 1 backup).
        public var creator: Application?

        public init(label: String, attributes: [String: String], secret: Secret, created: UInt64, modified: UInt64,
                    creator: Application? = nil) {
            self.label = label
            self.attributes = attributes
            self.secret = secret
            self.created = created
            self.modified = modified
            self.creator = creator
        }

        /// The item to add when restoring (with its times and creator).
        public var newItem: NewItem {
            NewItem(label: label, attributes: attributes, secret: secret, times: (created, modified), creator: creator)
        }
    }

    /// An `AccessGrant` as a backup holds it. Item ids are the store's and change when a
    /// collection is restored, so the item is named by its position in the collection's items.
    public typealias Grant = CofferCore.Grant<Int>

    public var collections: [Collection]
    /// Alias name to collection id.
    public var aliases: [String: CollectionID]

    public init(collections: [Collection], aliases: [String: CollectionID]) {
        self.collections = collections
        self.aliases = aliases
    }
}
