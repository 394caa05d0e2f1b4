import CofferCrypto
import Synchronization

/// How much memory an in-memory collection may hold: in all, and per owner (`NewItem.owner`).
public struct MemoryBudget: Equatable, Sendable {
    /// Bytes all items may take together.
    public var totalBytes: Int
    /// Bytes the items charged to one owner may take.
    public var bytesPerOwner: Int

    public init(totalBytes: Int, bytesPerOwner: Int) {
        self.totalBytes = totalBytes
        self.bytesPerOwner = bytesPerOwner
    }

    /// 64 MiB in all, 16 MiB per owner: room for tens of thousands of passwords, while no
    /// single client can take what the others need.
    public static let standard = MemoryBudget(totalBytes: 64 << 20, bytesPerOwner: 16 << 20)
}

/// A collection that lives only in memory: the Secret Service's `session` collection. It is
/// always unlocked; locking it empties it, as gnome-keyring's `LockService` does.
///
/// Secrets are kept sealed (AES-256-GCM under a random key of this process, which alone lives
/// in secure memory) in ordinary memory, and opened into secure memory only for the call that
/// reads them, so the session collection cannot exhaust the locked memory for secrets. What the items
/// take is counted against a `MemoryBudget`; a change past it fails with `limitExceeded` and
/// changes nothing.
public final class MemoryCollection: CollectionBackend, Sendable {
    private struct Entry {
        var metadata: ItemMetadata
        /// Nonce, then the AES-GCM ciphertext and tag of the secret.
        var sealed: [UInt8]
        var owner: String?
        /// What the entry is charged (see `cost(of:sealed:)`).
        var cost: Int
    }
    private struct Pair: Hashable, Sendable {
        let name: String
        let value: String
    }
    private struct State {
        var label: String
        var created: UInt64
        var modified: UInt64
        var items: [ItemID: Entry] = [:]
        var index = AttributeIndex<Pair>()
        var nextID: ItemID = 1
        /// Made at the first write (it needs secure memory, which may run short).
        var key: AESGCMKey?
        var totalCost = 0
        /// Cost per owner; items without an owner are counted under "".
        var costByOwner: [String: Int] = [:]
    }

    public let id: CollectionID
    public let budget: MemoryBudget
    private let state: Mutex<State>

    public init(id: CollectionID = .session, label: String = "Session", budget: MemoryBudget = .standard) {
        self.id = id
        self.budget = budget
        let now = Clock.now()
        state = Mutex(State(label: label, created: now, modified: now))
    }

    public var isLocked: Bool { false }

    public func info() -> CollectionInfo {
        state.withLock { s in
            CollectionInfo(id: id, label: s.label, created: s.created, modified: s.modified,
                           isLocked: false, itemCount: s.items.count)
        }
    }

    public func setLabel(_ label: String) throws(CofferError) {
        try Limits.validate(label: label)
        state.withLock { s in
            s.label = label
            s.modified = Clock.now()
        }
    }

    public func itemIDs(matching attributes: Attributes, limit: MatchLimit) -> [ItemID] {
        // Every search looks here too (the session collection), and it is usually empty.
        state.withLock { $0.items.isEmpty ? [] : $0.index.items(matchingAll: Self.terms(attributes), limit: limit) }
    }

    public func itemIDs(withExactly attributes: Attributes) -> [ItemID] {
        state.withLock { $0.index.items(withExactly: Self.terms(attributes)) }
    }

    public func contains(_ item: ItemID) -> Bool {
        state.withLock { $0.items[item] != nil }
    }

    public func metadata(of item: ItemID) throws(CofferError) -> ItemMetadata {
        try state.withLock { s throws(CofferError) in
            guard let entry = s.items[item] else { throw .itemNotFound }
            return entry.metadata
        }
    }

    public func metadata(of items: [ItemID]) throws(CofferError) -> [ItemMetadata?] {
        state.withLock { s in items.map { s.items[$0]?.metadata } }
    }

    public func secret(of item: ItemID) throws(CofferError) -> Secret {
        try state.withLock { s throws(CofferError) in
            guard let entry = s.items[item], let key = s.key else { throw .itemNotFound }
            return try Self.open(entry, of: item, with: key)
        }
    }

    public func commit(_ changes: [ItemChange]) throws(CofferError) -> [ChangedItem] {
        try state.withLock { s throws(CofferError) in
            // A batch of several changes is made on a copy, so that one over the budget leaves
            // nothing of the others behind; a single change checks before it touches anything.
            guard changes.count > 1 else { return try Self.apply(changes, to: &s, budget: budget) }
            var copy = s
            let touched = try Self.apply(changes, to: &copy, budget: budget)
            s = copy
            return touched
        }
    }

    /// Empties the collection; it stays unlocked.
    public func lock() {
        state.withLock { s in
            s.items = [:]
            s.index.removeAll()
            s.totalCost = 0
            s.costByOwner = [:]
        }
    }

    public func unlock(password: SecureBytes) {}

    public func changePassword(from old: SecureBytes, to new: SecureBytes) throws(CofferError) {
        throw .invalidArgument("collection '\(id)' lives in memory only and has no password")
    }

    /// Always open: the collection holds what clients keep for the running session only.
    public func access() -> CollectionAccess { .legacy }

    public func updateAccess(_ change: (inout CollectionAccess) throws(CofferError) -> Void) throws(CofferError) -> CollectionAccess {
        throw .invalidArgument("collection '\(id)' lives in memory only: every application of the session may read it, and it has no access rules to change")
    }

    // MARK: Changes

    private static func apply(_ changes: [ItemChange], to s: inout State, budget: MemoryBudget) throws(CofferError) -> [ChangedItem] {
        for change in changes {
            switch change {
            case .update(let id, _), .remove(let id):
                guard s.items[id] != nil else { throw .itemNotFound }
            case .insert(let new, let policy):
                _ = try policy.resolve(existing: s.index.items(withExactly: terms(new.attributes)), exists: { s.items[$0] != nil })
            }
        }
        let now = Clock.now()
        var touched: [ChangedItem] = []
        for change in changes {
            switch change {
            case .insert(let new, let policy):
                let existing = s.index.items(withExactly: terms(new.attributes))
                let changes = ItemChanges(label: new.label, attributes: new.attributes, secret: new.secret)
                if case .overwrite(let id) = try policy.resolve(existing: existing, exists: { s.items[$0] != nil }) {
                    try update(id, with: changes, owner: .some(new.owner), in: &s, at: now, budget: budget)
                    touched.append(ChangedItem(id: id, isNew: false, label: s.items[id]?.metadata.label))
                    continue
                }
                let id = s.nextID
                let metadata = ItemMetadata(label: new.label, attributes: new.attributes, contentType: new.secret.contentType,
                                            created: new.times?.created ?? now, modified: new.times?.modified ?? now,
                                            creator: new.creator)
                let sealed = try seal(new.secret, of: id, in: &s)
                let entry = Entry(metadata: metadata, sealed: sealed, owner: new.owner, cost: cost(of: metadata, sealed: sealed))
                try charge(entry, replacing: nil, in: &s, budget: budget)
                s.nextID += 1
                s.items[id] = entry
                s.index.insert(id, terms: termList(new.attributes))
                touched.append(ChangedItem(id: id, isNew: true, label: new.label))
            case .update(let id, let changes):
                try update(id, with: changes, owner: nil, in: &s, at: now, budget: budget)
                touched.append(ChangedItem(id: id, isNew: false, label: s.items[id]?.metadata.label))
            case .remove(let id):
                let old = s.items.removeValue(forKey: id)
                if let old { refund(old, in: &s) }
                s.index.remove(id)
                touched.append(ChangedItem(id: id, isNew: false, label: old?.metadata.label))
            }
        }
        if !changes.isEmpty { s.modified = now }
        return touched
    }

    /// Applies `changes` to item `id`; with `owner`, the item is charged to that owner from now on.
    private static func update(_ id: ItemID, with changes: ItemChanges, owner: String??, in s: inout State,
                               at now: UInt64, budget: MemoryBudget) throws(CofferError) {
        let old = s.items[id]!
        var entry = old
        if let owner { entry.owner = owner }
        if let label = changes.label { entry.metadata.label = label }
        let attributes = changes.attributes(replacing: old.metadata.attributes)
        if let attributes { entry.metadata.attributes = attributes }
        if let secret = changes.secret {
            entry.sealed = try seal(secret, of: id, in: &s)
            entry.metadata.contentType = secret.contentType
        }
        entry.metadata.modified = now
        entry.cost = cost(of: entry.metadata, sealed: entry.sealed)
        try charge(entry, replacing: old, in: &s, budget: budget)
        if let attributes { s.index.insert(id, terms: termList(attributes)) }
        s.items[id] = entry
    }

    // MARK: The budget

    /// What an item takes: its sealed secret, label, attributes and content type, plus a fixed
    /// amount for the dictionary entries and index terms that hold it.
    private static func cost(of metadata: ItemMetadata, sealed: [UInt8]) -> Int {
        let attributes = metadata.attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 96 }
        return 128 + sealed.count + metadata.label.utf8.count + metadata.contentType.utf8.count + attributes
    }

    /// Charges `entry` in place of `old` (nil for a new item), or throws `limitExceeded` and
    /// charges nothing.
    private static func charge(_ entry: Entry, replacing old: Entry?, in s: inout State, budget: MemoryBudget) throws(CofferError) {
        let owner = entry.owner ?? ""
        let oldOwner = old.map { $0.owner ?? "" }
        let total = s.totalCost + entry.cost - (old?.cost ?? 0)
        let owned = (s.costByOwner[owner] ?? 0) + entry.cost - (oldOwner == owner ? old!.cost : 0)
        guard total <= budget.totalBytes || total <= s.totalCost else {
            throw .limitExceeded("the session collection is full (\(budget.totalBytes >> 20) MiB in all); delete items from it or store in a persistent collection")
        }
        guard owned <= budget.bytesPerOwner || owned <= (s.costByOwner[owner] ?? 0) else {
            throw .limitExceeded("this client's items in the session collection take their whole share (\(budget.bytesPerOwner >> 20) MiB); delete some of them first")
        }
        if let old { refund(old, in: &s) }
        s.totalCost += entry.cost
        s.costByOwner[owner, default: 0] += entry.cost
    }

    private static func refund(_ entry: Entry, in s: inout State) {
        let owner = entry.owner ?? ""
        s.totalCost -= entry.cost
        s.costByOwner[owner, default: 0] -= entry.cost
        if s.costByOwner[owner] == 0 { s.costByOwner[owner] = nil }
    }

    // MARK: Sealing

    private static func seal(_ secret: Secret, of id: ItemID, in s: inout State) throws(CofferError) -> [UInt8] {
        let key: AESGCMKey
        if let existing = s.key {
            key = existing
        } else {
            key = try CofferError.catching { try AESGCMKey(try Random.secureBytes(AESGCM.keyLength)) }
            s.key = key
        }
        let nonce = Random.nonce(AESGCM.nonceLength)
        return try CofferError.catching { nonce + (try key.seal(secret.bytes, nonce: nonce, aad: aad(of: id))) }
    }

    private static func open(_ entry: Entry, of id: ItemID, with key: AESGCMKey) throws(CofferError) -> Secret {
        let nonce = Array(entry.sealed[0..<AESGCM.nonceLength])
        let bytes = try CofferError.catching {
            try key.open(entry.sealed[AESGCM.nonceLength...], nonce: nonce, aad: aad(of: id))
        }
        return Secret(bytes: bytes, contentType: entry.metadata.contentType)
    }

    /// Binds a sealed secret to its item, so secrets cannot be swapped between items.
    private static func aad(of id: ItemID) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: id >> ($0 * 8)) }   // little-endian
    }

    private static func terms(_ attributes: Attributes) -> Set<Pair> {
        Set(attributes.map { Pair(name: $0.key, value: $0.value) })
    }

    private static func termList(_ attributes: Attributes) -> [Pair] {
        attributes.map { Pair(name: $0.key, value: $0.value) }
    }
}
