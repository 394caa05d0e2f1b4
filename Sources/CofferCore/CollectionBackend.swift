import CofferCrypto

/// What a collection reports about itself, locked or not.
public struct CollectionInfo: Equatable, Sendable {
    public let id: CollectionID
    public var label: String
    /// Seconds since the Unix epoch.
    public var created: UInt64
    public var modified: UInt64
    public var isLocked: Bool
    /// How many items the collection holds (known even while locked).
    public var itemCount: Int
    /// Set when part of the collection's file failed verification and was (or, at the next
    /// change, will be) set aside: what happened and where those bytes are kept.
    public var recovery: String?

    public init(id: CollectionID, label: String, created: UInt64, modified: UInt64, isLocked: Bool, itemCount: Int,
                recovery: String? = nil) {
        self.id = id
        self.label = label
        self.created = created
        self.modified = modified
        self.isLocked = isLocked
        self.itemCount = itemCount
        self.recovery = recovery
    }
}

/// One change in a batch that a backend applies atomically and durably.
public enum ItemChange: Sendable {
    /// Adds an item; what happens when one with exactly the same attributes exists is decided
    /// inside the backend's commit, under its lock, so concurrent writers cannot race it.
    case insert(NewItem, onDuplicate: DuplicatePolicy)
    case update(ItemID, ItemChanges)
    case remove(ItemID)
}

/// The item one change of a commit touched, and whether that change created it.
public struct ChangedItem: Equatable, Sendable {
    public let id: ItemID
    /// False when an update, a removal, or an insert that replaced an existing item.
    public let isNew: Bool
    private let readLabel: @Sendable () -> String?

    /// The item's label after the change; for a removal, the label it had (nil where its
    /// record cannot be read: a damaged item can still be removed).
    public var label: String? { readLabel() }

    public init(id: ItemID, isNew: Bool, label: String?) {
        self.init(id: id, isNew: isNew, removedLabel: { label })
    }

    /// A removal whose label `readLabel` reads when asked (from a copy of the removed record,
    /// once the change is durable), not during the commit, where it would hold back the reply.
    public init(id: ItemID, isNew: Bool, removedLabel readLabel: @escaping @Sendable () -> String?) {
        self.id = id
        self.isNew = isNew
        self.readLabel = readLabel
    }

    public static func == (a: ChangedItem, b: ChangedItem) -> Bool {
        a.id == b.id && a.isNew == b.isNew && a.label == b.label
    }
}

/// The storage of one collection: the in-memory `session` collection, or an encrypted file.
///
/// Implementations are thread-safe. Searching by attributes works while locked (through an
/// index); reading metadata or secrets and every change need the collection unlocked.
public protocol CollectionBackend: AnyObject, Sendable {
    var id: CollectionID { get }
    func info() throws(CofferError) -> CollectionInfo
    func setLabel(_ label: String) throws(CofferError)
    /// Every item carrying all of `attributes` (an empty map matches all), ascending by id.
    /// With `.one`, at most one id. Works while locked.
    func itemIDs(matching attributes: Attributes, limit: MatchLimit) throws(CofferError) -> [ItemID]
    /// Every item whose attributes equal `attributes` exactly, ascending by id. Works while locked.
    func itemIDs(withExactly attributes: Attributes) throws(CofferError) -> [ItemID]
    /// Whether the item exists. Works while locked.
    func contains(_ item: ItemID) throws(CofferError) -> Bool
    func metadata(of item: ItemID) throws(CofferError) -> ItemMetadata
    /// The metadata of each of `items`, by position (nil: no such item), with one look at what
    /// other processes changed for the whole batch.
    func metadata(of items: [ItemID]) throws(CofferError) -> [ItemMetadata?]
    func secret(of item: ItemID) throws(CofferError) -> Secret
    /// Hands `body` the secret of each of `items` that exists, with its position in `items`,
    /// one at a time: each secret's plaintext is released before the next is decrypted, so a
    /// large batch needs secure memory for one secret only. One look at what other processes
    /// changed for the whole batch. Any failure other than a missing item ends the batch.
    func forEachSecret(of items: [ItemID], _ body: (Int, Secret) throws -> Void) throws
    /// Applies `changes` all or nothing and returns, in order, the item each change touched.
    /// Durable when it returns. Unknown ids in update/remove throw `itemNotFound` before any change.
    func commit(_ changes: [ItemChange]) throws(CofferError) -> [ChangedItem]
    /// As `commit(_:)`, for a caller that hands the outcome on (a client's reply): `acknowledge`
    /// gets the touched items as soon as the changes are durable and every reader sees them,
    /// which may be before the backend is done with what follows a commit (letting go of its
    /// file lock, compacting). `changes` is emptied first, so that the secrets they carry are
    /// released, and wiped, before anyone hears of the outcome. When it throws, `acknowledge`
    /// was not called and `changes` is left whole.
    ///
    /// `acknowledge` runs inside the commit, holding the collection's write locks: it must
    /// only hand the outcome on, never change the collection or open it another way.
    func commit(_ changes: inout [ItemChange], acknowledge: ([ChangedItem]) -> Void) throws(CofferError)
    var isLocked: Bool { get }
    func lock()
    /// Locks; with `keepingKey`, keeps the key aside (in secure memory) for
    /// `unlockWithKeptKey`, the fingerprint's re-unlock; without, wipes a key kept before.
    func lock(keepingKey: Bool)
    /// Whether a key is kept aside.
    var hasKeptKey: Bool { get }
    /// Unlocks with the kept key (false when none is kept); the kept key is gone after.
    func unlockWithKeptKey() throws(CofferError) -> Bool
    /// Wipes the kept key.
    func forgetKeptKey()
    /// Unlocks with `password`; `authenticationFailed` if it is wrong. Does the slow key
    /// derivation without holding the backend's lock.
    func unlock(password: SecureBytes) throws(CofferError)
    /// Unlocks with the first of `passwords` that is right and returns its position; all
    /// wrong count as one wrong password.
    func unlock(anyOf passwords: [SecureBytes]) throws(CofferError) -> Int
    /// How long after wrong passwords the next one waits before it is checked (0: none).
    var secondsBeforeNextUnlock: UInt64 { get }
    func changePassword(from old: SecureBytes, to new: SecureBytes) throws(CofferError)
    /// Who may read the collection's secrets (needs it unlocked: the rules are encrypted).
    func access() throws(CofferError) -> CollectionAccess
    /// Changes the access rules with `change`, durably, under the collection's write lock (so
    /// that two processes changing them at once both count); returns the new rules.
    func updateAccess(_ change: (inout CollectionAccess) throws(CofferError) -> Void) throws(CofferError) -> CollectionAccess
}

extension CollectionBackend {
    public var secondsBeforeNextUnlock: UInt64 { 0 }

    public func lock(keepingKey: Bool) { lock() }
    public var hasKeptKey: Bool { false }
    public func unlockWithKeptKey() throws(CofferError) -> Bool { false }
    public func forgetKeptKey() {}

    public func commit(_ changes: inout [ItemChange], acknowledge: ([ChangedItem]) -> Void) throws(CofferError) {
        let changed = try commit(changes)
        changes = []
        acknowledge(changed)
    }

    public func unlock(anyOf passwords: [SecureBytes]) throws(CofferError) -> Int {
        for (position, password) in passwords.enumerated() {
            do throws(CofferError) {
                try unlock(password: password)
                return position
            } catch .authenticationFailed {
                continue
            }
        }
        throw .authenticationFailed
    }

    public func forEachSecret(of items: [ItemID], _ body: (Int, Secret) throws -> Void) throws {
        for (position, item) in items.enumerated() {
            let secret: Secret
            do {
                secret = try self.secret(of: item)
            } catch .itemNotFound {
                continue
            }
            try body(position, secret)
        }
    }
}

/// Lists, opens, creates and deletes the persistent collections, and keeps the alias table.
public protocol CollectionProvider: AnyObject, Sendable {
    /// The ids of the collections that exist now, sorted (re-read when the store changed).
    func collectionIDs() throws(CofferError) -> [CollectionID]
    func open(_ id: CollectionID) throws(CofferError) -> any CollectionBackend
    func create(_ id: CollectionID, label: String, password: SecureBytes,
                access: CollectionAccess) throws(CofferError) -> any CollectionBackend
    func delete(_ id: CollectionID) throws(CofferError)
    func aliases() throws(CofferError) -> [String: CollectionID]
    func setAlias(_ name: String, to collection: CollectionID?) throws(CofferError)
}
