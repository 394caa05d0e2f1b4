import CofferCrypto

/// A collection that lives only in memory: the Secret Service's `session` collection. It is
/// always unlocked; locking it empties it, as gnome-keyring's `LockService` does.
public final class MemoryCollection: CollectionBackend, @unchecked Sendable {
    private struct Entry {
        var metadata: ItemMetadata
        var secret: Secret
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
    }

    public let id: CollectionID
    private let state: Locked<State>

    public init(id: CollectionID = .session, label: String = "Session") {
        self.id = id
        let now = Clock.now()
        state = Locked(State(label: label, created: now, modified: now))
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
        state.withLock { $0.index.items(matchingAll: Self.terms(attributes), limit: limit) }
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

    public func secret(of item: ItemID) throws(CofferError) -> Secret {
        try state.withLock { s throws(CofferError) in
            guard let entry = s.items[item] else { throw .itemNotFound }
            return entry.secret
        }
    }

    public func commit(_ changes: [ItemChange]) throws(CofferError) -> [ChangedItem] {
        try state.withLock { s throws(CofferError) in
            for change in changes {
                switch change {
                case .update(let id, _), .remove(let id):
                    guard s.items[id] != nil else { throw .itemNotFound }
                case .insert(let new, let policy):
                    _ = try policy.resolve(existing: s.index.items(withExactly: Self.terms(new.attributes)))
                }
            }
            let now = Clock.now()
            var touched: [ChangedItem] = []
            for change in changes {
                switch change {
                case .insert(let new, let policy):
                    let existing = s.index.items(withExactly: Self.terms(new.attributes))
                    if case .overwrite(let id) = try policy.resolve(existing: existing) {
                        let changes = ItemChanges(label: new.label, attributes: new.attributes, secret: new.secret)
                        Self.apply(changes, to: id, in: &s, at: now)
                        touched.append(ChangedItem(id: id, isNew: false))
                        continue
                    }
                    let id = s.nextID
                    s.nextID += 1
                    let metadata = ItemMetadata(label: new.label, attributes: new.attributes,
                                                contentType: new.secret.contentType, created: now, modified: now)
                    s.items[id] = Entry(metadata: metadata, secret: new.secret)
                    s.index.insert(id, terms: Self.termList(new.attributes))
                    touched.append(ChangedItem(id: id, isNew: true))
                case .update(let id, let changes):
                    Self.apply(changes, to: id, in: &s, at: now)
                    touched.append(ChangedItem(id: id, isNew: false))
                case .remove(let id):
                    s.items[id] = nil
                    s.index.remove(id)
                    touched.append(ChangedItem(id: id, isNew: false))
                }
            }
            if !changes.isEmpty { s.modified = now }
            return touched
        }
    }

    /// Empties the collection; it stays unlocked.
    public func lock() {
        state.withLock { s in
            s.items = [:]
            s.index.removeAll()
        }
    }

    public func unlock(password: SecureBytes) {}

    public func changePassword(from old: SecureBytes, to new: SecureBytes) throws(CofferError) {
        throw .invalidArgument("collection '\(id)' lives in memory only and has no password")
    }

    private static func apply(_ changes: ItemChanges, to id: ItemID, in s: inout State, at now: UInt64) {
        var entry = s.items[id]!
        if let label = changes.label { entry.metadata.label = label }
        if let attributes = changes.attributes {
            entry.metadata.attributes = attributes
            s.index.insert(id, terms: Self.termList(attributes))
        }
        if let secret = changes.secret {
            entry.secret = secret
            entry.metadata.contentType = secret.contentType
        }
        entry.metadata.modified = now
        s.items[id] = entry
    }

    private static func terms(_ attributes: Attributes) -> Set<Pair> {
        Set(attributes.map { Pair(name: $0.key, value: $0.value) })
    }

    private static func termList(_ attributes: Attributes) -> [Pair] {
        attributes.map { Pair(name: $0.key, value: $0.value) }
    }
}
