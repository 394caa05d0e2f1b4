import CofferCore
import CofferCrypto
import DBusKit
import SecretServiceClient
import SecretServiceProtocol

/// Daemon mode: the keychain of a running Secret Service (cofferd), reached over the session
/// bus through `SecretServiceClient`. Collections the daemon has unlocked need no password,
/// and lock and unlock last beyond this process. Passwords and secrets travel only inside an
/// encrypted session (DH + AES).
///
/// Items are found with Collection.SearchItems within one collection, as in direct mode.
/// Passwords go through gnome-keyring's Create/Unlock/ChangeWithMasterPassword (no prompts).
final class DaemonKeychain: KeychainBackend {
    private let client: SecretServiceClient
    private var openedSession: ClientSession?

    private init(client: SecretServiceClient) {
        self.client = client
    }

    deinit {
        if let openedSession { try? client.closeSession(openedSession) }
        client.close()
    }

    /// A client of the Secret Service when one owns org.freedesktop.secrets on the session bus.
    static func connectIfRunning() -> DaemonKeychain? {
        (try? SecretServiceClient.connectToSessionBus()).map { DaemonKeychain(client: $0) }
    }

    var keepsUnlocked: Bool { true }

    /// The store directory of the daemon (what it tells over org.coffer.Daemon), or nil when
    /// the service is not cofferd or does not say.
    var dataDirectory: String? {
        (try? CofferDaemonDescription.read(from: client.destination, on: client.connection))?.dataDirectory
    }

    // MARK: Collections and aliases

    func collectionIDs() throws -> [CollectionID] {
        try calling(.service) { try client.collections() }.compactMap(Self.collectionID(at:))
    }

    func info(_ id: CollectionID) throws -> CollectionInfo {
        let path = SecretPath.collection(named: id.rawValue)
        let collection = try calling(.collection(id)) { try client.collection(path) }
        // The daemon's own report: it knows its data directory and what it found in the file.
        let recovery = try calling(.collection(id)) { try client.recovery(of: path) }
        return CollectionInfo(id: id, label: collection.label, created: collection.created, modified: collection.modified,
                              isLocked: collection.isLocked, itemCount: collection.items.count, recovery: recovery)
    }

    func aliases() throws -> [String: CollectionID] {
        var result: [String: CollectionID] = [:]
        for name in client.aliasNames() {
            if let id = try resolveAlias(name) { result[name] = id }
        }
        return result
    }

    func resolveAlias(_ name: String) throws -> CollectionID? {
        try calling(.service) { try client.readAlias(name) }.flatMap(Self.collectionID(at:))
    }

    func setAlias(_ name: String, to collection: CollectionID?) throws {
        let subject: DaemonErrors.Subject = collection.map { .collection($0) } ?? .service
        try calling(subject) { try client.setAlias(name, to: collection.map { SecretPath.collection(named: $0.rawValue) }) }
    }

    /// The service names a new collection after its label (cofferd: `CollectionID.derived`,
    /// which gives back any valid id not taken yet), so coffer creates it with the id as label
    /// and then sets the label asked for. Returns the id the service chose.
    func createCollection(_ id: CollectionID, label: String, password: SecureBytes) throws -> CollectionID {
        let session = try session()
        let path = try calling(.collection(id)) { try client.createCollection(label: id.rawValue, password: password, session: session) }
        guard let created = Self.collectionID(at: path) else { throw Self.unexpected("CreateWithMasterPassword") }
        if label != id.rawValue {
            try calling(.collection(created)) { try client.setLabel(of: path, to: label) }
        }
        return created
    }

    func deleteCollection(_ id: CollectionID) throws {
        try calling(.collection(id)) { try client.deleteCollection(SecretPath.collection(named: id.rawValue)) }
    }

    // MARK: Locking

    func lock(_ id: CollectionID) throws {
        _ = try calling(.collection(id)) { try client.lock([SecretPath.collection(named: id.rawValue)]) }
    }

    func unlock(_ id: CollectionID, password: SecureBytes) throws {
        let session = try session()
        try calling(.collection(id)) { try client.unlock(SecretPath.collection(named: id.rawValue), password: password, session: session) }
    }

    func unlockWithTPM(_ id: CollectionID, pin: SecureBytes?) throws {
        let session = try session()
        let pin = try pin ?? SecureBytes(count: 0)
        try calling(.collection(id)) { try client.unlockWithTPM(SecretPath.collection(named: id.rawValue), pin: pin, session: session) }
    }

    func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws {
        let session = try session()
        try calling(.collection(id)) {
            try client.changePassword(of: SecretPath.collection(named: id.rawValue), from: old, to: new, session: session)
        }
    }

    // MARK: Items

    func add(_ item: NewItem, to id: CollectionID, replace: Bool) throws -> (reference: ItemReference, replaced: Bool) {
        let existing = try exactMatches(of: item.attributes, in: id)
        if !replace && !existing.isEmpty { throw CofferError.duplicateItem }
        let session = try session()
        let path = try calling(.item(id)) {
            try client.createItem(in: SecretPath.collection(named: id.rawValue), label: item.label, attributes: item.attributes,
                                  secret: item.secret.bytes, contentType: item.secret.contentType, replace: replace,
                                  session: session)
        }
        guard let reference = Self.reference(at: path) else { throw Self.unexpected("CreateItem") }
        return (reference, existing.contains(reference.item))
    }

    func search(_ query: Query) throws -> [ItemMatch] {
        let id = try scope(of: query)
        let references = try matches(of: query)
        guard !references.isEmpty else { return [] }
        guard try !isLocked(id) else {
            return references.map { ItemMatch(reference: $0, isLocked: true, metadata: nil) }
        }
        return try references.map { reference in
            let metadata = query.returnAttributes ? try metadata(of: reference) : nil
            return ItemMatch(reference: reference, isLocked: false, metadata: metadata)
        }
    }

    func update(_ query: Query, with changes: ItemChanges) throws -> [ItemReference] {
        // Checked here first, so that a bad change does not stop half way through the matches.
        if let label = changes.label { try Limits.validate(label: label) }
        if let attributes = changes.attributes { try Limits.validate(attributes: attributes) }
        if let secret = changes.secret { try Limits.validate(secret: secret) }
        let id = try scope(of: query)
        let references = try matches(of: query)
        guard !references.isEmpty else { throw CofferError.itemNotFound }
        guard try !isLocked(id) else { throw CofferError.locked(id.rawValue) }
        let session = try changes.secret.map { _ in try self.session() }
        for reference in references {
            let path = Self.path(of: reference)
            try calling(.item(id)) {
                if let label = changes.label { try client.setLabel(ofItem: path, to: label) }
                if let attributes = changes.attributes { try client.setAttributes(of: path, to: attributes) }
                if let secret = changes.secret, let session {
                    try client.setSecret(of: path, to: secret.bytes, contentType: secret.contentType, session: session)
                }
            }
        }
        return references
    }

    func delete(_ query: Query) throws -> [ItemReference] {
        let id = try scope(of: query)
        let references = try matches(of: query)
        guard !references.isEmpty else { return [] }
        guard try !isLocked(id) else { throw CofferError.locked(id.rawValue) }
        for reference in references {
            try calling(.item(id)) { try client.deleteItem(Self.path(of: reference)) }
        }
        return references
    }

    /// The secrets of `references` (one collection), in GetSecrets batches, each decoded into
    /// secure memory only when `body` gets it.
    /// The secrets cofferd gives; one it refuses (and did not refuse all, which is an error of
    /// its own) is an error too, saying how many were refused and why, never a silent gap.
    func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws {
        guard let collection = references.first?.collection else { return }
        let session = try session()
        var given = Set<Int>()
        try calling(.item(collection)) {
            try client.forEachSecret(of: references.map(Self.path(of:)), session: session) { position, secret in
                given.insert(position)
                try body(position, secret)
            }
        }
        guard given.count < references.count else { return }
        // Left out: refused, or locked or deleted meanwhile (as direct mode leaves those out).
        // An item that exists in an unlocked collection was refused; asking for the first of
        // those alone gets cofferd's reason.
        let refused = references.indices.filter { position in
            !given.contains(position) && (try? client.item(Self.path(of: references[position])))?.isLocked == false
        }
        guard let first = refused.first else { return }
        var reason = "its policy or the user did not allow it"
        do {
            _ = try client.secret(of: Self.path(of: references[first]), session: session)
        } catch let error as DBusError where error.name == DBusError.Name.accessDenied {
            reason = DaemonErrors.detail(error)
        } catch {}
        throw CLIError.refused("cofferd refused \(refused.count) of the \(references.count) secrets asked for: \(reason)")
    }

    // MARK: Helpers

    /// The transfer session, opened on first use.
    private func session() throws -> ClientSession {
        if let openedSession { return openedSession }
        let opened = try calling(.service) { try client.openSession(.encrypted) }
        openedSession = opened
        return opened
    }

    /// Runs `body`, turning the Secret Service's errors into coffer's (see `DaemonErrors`).
    @discardableResult
    private func calling<T>(_ subject: DaemonErrors.Subject, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CLIError {
            throw error
        } catch {
            throw DaemonErrors.translate(error, about: subject)
        }
    }

    private func scope(of query: Query) throws -> CollectionID {
        guard let id = query.collection else { throw CLIError.usage("no collection given") }
        return id
    }

    private func isLocked(_ id: CollectionID) throws -> Bool {
        try calling(.collection(id)) { try client.collection(SecretPath.collection(named: id.rawValue)).isLocked }
    }

    /// The items of the query's collection that carry its attributes, by ascending id (only
    /// the first with `.one`). Works while the collection is locked.
    private func matches(of query: Query) throws -> [ItemReference] {
        let id = try scope(of: query)
        let paths = try calling(.collection(id)) { try client.search(in: SecretPath.collection(named: id.rawValue), query.attributes) }
        let references = paths.compactMap(Self.reference(at:)).filter { $0.collection == id }.sorted { $0.item < $1.item }
        return query.limit == .one ? Array(references.prefix(1)) : references
    }

    /// The ids of the items of `id` whose attributes are exactly `attributes`.
    private func exactMatches(of attributes: Attributes, in id: CollectionID) throws -> [ItemID] {
        try matches(of: Query(attributes: attributes, collection: id)).filter { reference in
            try calling(.item(id)) { try client.item(Self.path(of: reference)).attributes } == attributes
        }.map(\.item)
    }

    /// Label, attributes and times (Secret Service items have no content type property: it
    /// travels with the secret, and listings do not show it).
    private func metadata(of reference: ItemReference) throws -> ItemMetadata {
        let item = try calling(.item(reference.collection)) { try client.item(Self.path(of: reference)) }
        return ItemMetadata(label: item.label, attributes: item.attributes, contentType: "text/plain",
                            created: item.created, modified: item.modified)
    }

    private static func collectionID(at path: ObjectPath) -> CollectionID? {
        if case .collection(let name) = SecretPath.parse(path) { return CollectionID(name) }
        return nil
    }

    private static func reference(at path: ObjectPath) -> ItemReference? {
        if case .item(let name, let item) = SecretPath.parse(path) { return CollectionID(name).map { ItemReference(collection: $0, item: item) } }
        return nil
    }

    /// The path the daemon serves the item `reference` at.
    private static func path(of reference: ItemReference) -> ObjectPath {
        SecretPath.item(reference.item, inCollectionNamed: reference.collection.rawValue)
    }

    /// A reply that does not have the shape the Secret Service specifies.
    private static func unexpected(_ what: String) -> CLIError {
        .storeFailure("the Secret Service gave an unexpected reply to \(what)")
    }
}
