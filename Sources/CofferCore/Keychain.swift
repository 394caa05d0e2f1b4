import CofferCrypto
import Synchronization

/// The Keychain-style facade over every collection: the four item operations (add, search,
/// update, delete) taking attribute queries, plus collection management and aliases.
///
/// Persistent collections come from a `CollectionProvider` (the encrypted store); the
/// `session` collection lives in memory. Thread-safe: backends guard themselves, and the
/// facade only guards its cache of opened collections.
public final class Keychain: Sendable {
    /// The alias clients store under when they name no collection.
    public static let defaultAlias = "default"

    private let provider: (any CollectionProvider)?
    private let session: MemoryCollection?
    private let opened = Mutex<[CollectionID: any CollectionBackend]>([:])

    /// A keychain over `provider`'s collections, plus the in-memory `session` collection
    /// (holding at most `sessionBudget`) unless `sessionCollection` is false.
    public init(provider: (any CollectionProvider)?, sessionCollection: Bool = true,
                sessionBudget: MemoryBudget = .standard) {
        self.provider = provider
        self.session = sessionCollection ? MemoryCollection(budget: sessionBudget) : nil
    }

    // MARK: Collections

    /// The ids of every collection, persistent ones sorted, then `session`.
    public func collectionIDs() throws(CofferError) -> [CollectionID] {
        var ids = try provider?.collectionIDs() ?? []
        if session != nil { ids.append(.session) }
        return ids
    }

    /// The backend of collection `id`, opened on first use.
    public func collection(_ id: CollectionID) throws(CofferError) -> any CollectionBackend {
        try collection(id, listed: false)
    }

    /// The backend of `id`; with `listed`, the caller has just seen `id` in `collectionIDs()`.
    private func collection(_ id: CollectionID, listed: Bool) throws(CofferError) -> any CollectionBackend {
        if let session, id == session.id { return session }
        guard let provider else { throw .collectionNotFound(id.rawValue) }
        if !listed, try !provider.collectionIDs().contains(id) {
            opened.withLock { $0[id] = nil }
            throw .collectionNotFound(id.rawValue)
        }
        if let backend = opened.withLock({ $0[id] }) { return backend }
        let backend = try provider.open(id)
        return opened.withLock { cache in
            if let raced = cache[id] { return raced }
            cache[id] = backend
            return backend
        }
    }

    public func info(_ id: CollectionID) throws(CofferError) -> CollectionInfo {
        try collection(id).info()
    }

    /// Creates a persistent collection protected by `password`, under `policy`; its id is
    /// derived from the label unless given. Returns the new id.
    @discardableResult
    public func createCollection(label: String, id: CollectionID? = nil, password: SecureBytes,
                                 policy: AccessPolicy = .forNewCollections) throws(CofferError) -> CollectionID {
        try Limits.validate(label: label)
        guard let provider else { throw .invalidArgument("this keychain has no persistent store") }
        var taken = Set(try collectionIDs())
        taken.insert(.session)
        let newID = id ?? CollectionID.derived(fromLabel: label, avoiding: taken)
        guard !taken.contains(newID) else { throw .collectionExists(newID.rawValue) }
        let backend = try provider.create(newID, label: label, password: password, access: CollectionAccess(policy: policy))
        opened.withLock { $0[newID] = backend }
        return newID
    }

    /// Deletes a persistent collection and everything in it, and drops aliases naming it.
    public func deleteCollection(_ id: CollectionID) throws(CofferError) {
        guard let provider, id != .session else { throw .invalidArgument("the session collection cannot be deleted") }
        _ = try collection(id)
        try provider.delete(id)
        opened.withLock { $0[id] = nil }
        for (name, target) in try provider.aliases() where target == id {
            try provider.setAlias(name, to: nil)
        }
    }

    // MARK: Aliases

    /// The collection an alias names, if that collection exists. `default` names `login`
    /// unless set otherwise; `session` always names the session collection.
    public func resolveAlias(_ name: String) throws(CofferError) -> CollectionID? {
        let ids = try collectionIDs()
        let fixed = name == CollectionID.login.rawValue || name == CollectionID.session.rawValue
        var target = fixed ? nil : try provider?.aliases()[name]
        if target == nil {
            switch name {
            case Self.defaultAlias, CollectionID.login.rawValue: target = .login
            case CollectionID.session.rawValue: target = session == nil ? nil : .session
            default: break
            }
        }
        guard let target, ids.contains(target) else { return nil }
        return target
    }

    /// Points `name` at `collection`, or removes the alias when `collection` is nil.
    ///
    /// `login` and `session` always name the collections of those ids (as in gnome-keyring),
    /// and `default` may not name the in-memory `session` collection: every client's new
    /// secrets would then vanish when the service stops, without a word.
    public func setAlias(_ name: String, to collection: CollectionID?) throws(CofferError) {
        try checkAlias(name, to: collection)
        guard let provider else { throw .invalidArgument("this keychain has no persistent store") }
        if let collection { _ = try self.collection(collection) }
        try provider.setAlias(name, to: collection)
    }

    /// Throws `invalidArgument` when `setAlias(name, to: collection)` could not be done
    /// whatever the store holds (see there).
    public func checkAlias(_ name: String, to collection: CollectionID?) throws(CofferError) {
        guard !name.isEmpty, name.utf8.count <= 64, CollectionID(name) != nil else {
            throw .invalidArgument("an alias name is \(CollectionID.rule)")
        }
        guard name != CollectionID.login.rawValue, name != CollectionID.session.rawValue else {
            throw .invalidArgument("the '\(name)' alias always names the '\(name)' collection and cannot be changed")
        }
        guard name != Self.defaultAlias || collection != .session else {
            throw .invalidArgument("the default alias cannot name the session collection: its items are not kept when the service stops")
        }
    }

    /// Every alias that names an existing collection, `default` included.
    public func aliases() throws(CofferError) -> [String: CollectionID] {
        var names = Set(try provider?.aliases().keys.map { $0 } ?? [])
        names.insert(Self.defaultAlias)
        var result: [String: CollectionID] = [:]
        for name in names {
            if let target = try resolveAlias(name) { result[name] = target }
        }
        return result
    }

    // MARK: The four operations

    /// Adds `item` to `collection` (the `default` alias's collection when nil).
    @discardableResult
    public func add(_ item: NewItem, to collection: CollectionID? = nil,
                    onDuplicate policy: DuplicatePolicy = .fail) throws(CofferError) -> ItemReference {
        try insert(item, into: collection, onDuplicate: policy).reference
    }

    /// Adds `item` as `add` does, and tells whether it is new or replaced an existing item.
    public func insert(_ item: NewItem, into collection: CollectionID?,
                       onDuplicate policy: DuplicatePolicy) throws(CofferError) -> (reference: ItemReference, isNew: Bool) {
        try item.validate()
        let target = if let collection { collection } else { try defaultCollection() }
        let backend = try self.collection(target)
        guard !backend.isLocked else { throw .locked(backend.id.rawValue) }
        let changed = try backend.commit([.insert(item, onDuplicate: policy)])[0]
        return (ItemReference(collection: backend.id, item: changed.id), changed.isNew)
    }

    /// Adds all of `items` to the unlocked `collection` in one atomic, durable commit: after a
    /// crash either every one is there or none is. Items with the same attributes as existing
    /// ones are added beside them. Returns their references, in order.
    public func insertAll(_ items: [NewItem], into collection: CollectionID) throws(CofferError) -> [ItemReference] {
        for item in items { try item.validate() }
        let backend = try self.collection(collection)
        guard !backend.isLocked else { throw .locked(backend.id.rawValue) }
        guard !items.isEmpty else { return [] }
        return try backend.commit(items.map { .insert($0, onDuplicate: .allow) }).map {
            ItemReference(collection: backend.id, item: $0.id)
        }
    }

    /// Every match of `query` (or the first, with `.one`); unlocked collections are searched
    /// first. Matches in locked collections carry only their reference.
    public func search(_ query: Query) throws(CofferError) -> [SearchResult] {
        var results: [SearchResult] = []
        for backend in try backends(in: query.collection) {
            let locked = backend.isLocked
            for id in try backend.itemIDs(matching: query.attributes, limit: query.limit) {
                let reference = ItemReference(collection: backend.id, item: id)
                if locked {
                    results.append(SearchResult(reference: reference, isLocked: true, metadata: nil, secret: nil))
                } else {
                    let metadata = query.returnAttributes ? try backend.metadata(of: id) : nil
                    let secret = query.returnSecret ? try backend.secret(of: id) : nil
                    results.append(SearchResult(reference: reference, isLocked: false, metadata: metadata, secret: secret))
                }
                if query.limit == .one { return results }
            }
        }
        return results
    }

    /// Applies `changes` to every match of `query`. Throws `itemNotFound` when nothing matches
    /// and `locked` (changing nothing) when a match is in a locked collection.
    @discardableResult
    public func update(_ query: Query, with changes: ItemChanges) throws(CofferError) -> [ItemReference] {
        try changes.validate()
        guard !changes.isEmpty else { throw .invalidArgument("nothing to change") }
        let matches = try unlockedMatches(of: query)
        guard !matches.isEmpty else { throw .itemNotFound }
        for (backend, ids) in matches {
            _ = try backend.commit(ids.map { .update($0, changes) })
        }
        return matches.flatMap { backend, ids in ids.map { ItemReference(collection: backend.id, item: $0) } }
    }

    /// Deletes every match of `query`; nothing matched is not an error. Throws `locked`
    /// (deleting nothing) when a match is in a locked collection.
    @discardableResult
    public func delete(_ query: Query) throws(CofferError) -> [ItemReference] {
        let matches = try unlockedMatches(of: query)
        for (backend, ids) in matches {
            _ = try backend.commit(ids.map { .remove($0) })
        }
        return matches.flatMap { backend, ids in ids.map { ItemReference(collection: backend.id, item: $0) } }
    }

    // MARK: Single items (the Secret Service's Item objects)

    public func exists(_ reference: ItemReference) -> Bool {
        (try? collection(reference.collection).contains(reference.item)) ?? false
    }

    public func metadata(of reference: ItemReference) throws(CofferError) -> ItemMetadata {
        try unlockedBackend(of: reference).metadata(of: reference.item)
    }

    public func secret(of reference: ItemReference) throws(CofferError) -> Secret {
        try unlockedBackend(of: reference).secret(of: reference.item)
    }

    /// Hands `body` the secret of each of `references` (with its position) that exists in an
    /// unlocked collection, one at a time; missing items and items of locked collections are
    /// left out, as the Secret Service's GetSecrets does. Each secret's plaintext is released
    /// before the next is read. Each collection is looked up, and checked for what other
    /// processes changed, once for all its items. Any other failure ends the call.
    public func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws {
        let existing = Set(try collectionIDs())
        for (id, positions) in references.positionsByCollection() where existing.contains(id) {
            let backend = try collection(id, listed: true)
            guard !backend.isLocked else { continue }
            try backend.forEachSecret(of: positions.map { references[$0].item }) { index, secret in
                try body(positions[index], secret)
            }
        }
    }

    /// Applies `changes` to the unlocked collection `id` in one atomic, durable commit (one
    /// append, its disk flushes shared by all of them); returns the item each touched, in order.
    /// Each change is checked as `insert`, `update` and `delete` check it. A collection already
    /// opened is changed without looking at the collection list again: its commit catches up
    /// with its file under the file's lock, and finds a collection removed meanwhile missing.
    public func commit(_ changes: [ItemChange], in id: CollectionID) throws(CofferError) -> [ChangedItem] {
        var changes = changes
        var changed: [ChangedItem] = []
        try commit(&changes, in: id) { changed = $0 }
        return changed
    }

    /// As `commit(_:in:)`, for a caller that hands the outcome on (a client's reply):
    /// `acknowledge` gets the touched items as soon as they are durable and readable, before
    /// the collection is done with what follows its commit, and `changes` is emptied just
    /// before (see `CollectionBackend.commit(_:acknowledge:)`).
    public func commit(_ changes: inout [ItemChange], in id: CollectionID, acknowledge: ([ChangedItem]) -> Void) throws(CofferError) {
        for change in changes {
            switch change {
            case .insert(let item, _): try item.validate()
            case .update(_, let itemChanges): try itemChanges.validate()
            case .remove: break
            }
        }
        let cached = opened.withLock { $0[id] }
        let backend = if let cached { cached } else { try collection(id) }
        guard !backend.isLocked else { throw .locked(backend.id.rawValue) }
        try backend.commit(&changes, acknowledge: acknowledge)
    }

    public func update(_ reference: ItemReference, with changes: ItemChanges) throws(CofferError) {
        try changes.validate()
        _ = try unlockedBackend(of: reference).commit([.update(reference.item, changes)])
    }

    public func delete(_ reference: ItemReference) throws(CofferError) {
        _ = try unlockedBackend(of: reference).commit([.remove(reference.item)])
    }

    // MARK: Helpers

    private func defaultCollection() throws(CofferError) -> CollectionID {
        guard let id = try resolveAlias(Self.defaultAlias) else {
            throw .collectionNotFound(Self.defaultAlias)
        }
        return id
    }

    /// The collections a query covers: one, or all that open (unlocked first); a collection
    /// whose file is damaged is skipped so that the others keep working.
    private func backends(in scope: CollectionID?) throws(CofferError) -> [any CollectionBackend] {
        if let scope { return [try collection(scope)] }
        var unlocked: [any CollectionBackend] = []
        var locked: [any CollectionBackend] = []
        for id in try collectionIDs() {
            guard let backend = try? collection(id, listed: true) else { continue }
            if backend.isLocked { locked.append(backend) } else { unlocked.append(backend) }
        }
        return unlocked + locked
    }

    private func unlockedMatches(of query: Query) throws(CofferError) -> [(any CollectionBackend, [ItemID])] {
        var matches: [(any CollectionBackend, [ItemID])] = []
        for backend in try backends(in: query.collection) {
            let ids = try backend.itemIDs(matching: query.attributes, limit: query.limit)
            guard !ids.isEmpty else { continue }
            guard !backend.isLocked else { throw .locked(backend.id.rawValue) }
            matches.append((backend, ids))
            if query.limit == .one { break }
        }
        return matches
    }

    private func unlockedBackend(of reference: ItemReference) throws(CofferError) -> any CollectionBackend {
        let backend = try collection(reference.collection)
        guard try backend.contains(reference.item) else { throw .itemNotFound }
        guard !backend.isLocked else { throw .locked(backend.id.rawValue) }
        return backend
    }
}
