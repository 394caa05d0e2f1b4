import CofferCore
import CofferStore
import CofferCrypto
import DBusKit

/// Daemon mode: the keychain of a running Secret Service (cofferd), reached over the session
/// bus. Collections the daemon has unlocked need no password, and lock and unlock last beyond
/// this process. Passwords and secrets travel only inside a `DaemonSession` (DH + AES).
///
/// Items are found with Collection.SearchItems within one collection, as in direct mode.
/// Passwords go through gnome-keyring's Create/Unlock/ChangeWithMasterPassword (no prompts).
final class DaemonKeychain: KeychainBackend {
    private let bus: DaemonBus
    private var openedSession: DaemonSession?

    private init(bus: DaemonBus) {
        self.bus = bus
    }

    deinit {
        openedSession?.close(on: bus)
        bus.connection.close()
    }

    /// A client of the Secret Service when one owns org.freedesktop.secrets on the session bus.
    static func connectIfRunning() -> DaemonKeychain? {
        DaemonBus.connectIfRunning().map { DaemonKeychain(bus: $0) }
    }

    var keepsUnlocked: Bool { true }

    // MARK: Collections and aliases

    func collectionIDs() throws -> [CollectionID] {
        let paths = try calling(.service) { try bus.get(SecretBus.servicePath, SecretBus.service, "Collections") }
        guard let paths = paths.objectPathArray else { throw DaemonBus.unexpected("Collections") }
        return paths.compactMap(SecretBus.collectionID(at:))
    }

    func info(_ id: CollectionID) throws -> CollectionInfo {
        let values = try calling(.collection(id)) { try bus.getAll(SecretBus.path(of: id), SecretBus.collection) }
        guard let label = values["Label"]?.string, let locked = values["Locked"]?.bool,
              let items = values["Items"]?.objectPathArray else { throw DaemonBus.unexpected("GetAll") }
        return CollectionInfo(id: id, label: label, created: values["Created"]?.uint64 ?? 0,
                              modified: values["Modified"]?.uint64 ?? 0, isLocked: locked, itemCount: items.count,
                              recovery: FileStore.recoveryReport(directory: FileStore.defaultDirectory(), id: id))
    }

    func aliases() throws -> [String: CollectionID] {
        var result: [String: CollectionID] = [:]
        for name in bus.aliasNames() {
            if let id = try resolveAlias(name) { result[name] = id }
        }
        return result
    }

    func resolveAlias(_ name: String) throws -> CollectionID? {
        let reply = try calling(.service) { try bus.call(SecretBus.servicePath, SecretBus.service, "ReadAlias", [.string(name)]) }
        guard let path = reply.first?.objectPath else { throw DaemonBus.unexpected("ReadAlias") }
        return SecretBus.collectionID(at: path)
    }

    func setAlias(_ name: String, to collection: CollectionID?) throws {
        let target = collection.map(SecretBus.path(of:)) ?? SecretBus.none
        let subject: DaemonErrors.Subject = collection.map { .collection($0) } ?? .service
        _ = try calling(subject) {
            try bus.call(SecretBus.servicePath, SecretBus.service, "SetAlias", [.string(name), .objectPath(target)])
        }
    }

    /// The service names a new collection after its label (lower-cased, other characters
    /// as `_`); coffer creates it under the id as label and then sets the label asked for.
    func checkNewCollectionID(_ id: CollectionID, existing: [CollectionID]) throws {
        let taken = Set(existing + [.session])
        guard CollectionID.derived(fromLabel: id.rawValue, avoiding: taken) == id else {
            throw CLIError.usage("through cofferd, a new collection's id is 1 to 48 characters of a-z, 0-9 and _ (no capitals); choose such an id, or pass --data-dir to work on the files directly")
        }
    }

    func createCollection(_ id: CollectionID, label: String, password: SecureBytes) throws -> CollectionID {
        let master = try session().encode(password)
        let properties = DBusValue.variantDictionary(["org.freedesktop.Secret.Collection.Label": .string(id.rawValue)])
        let reply = try calling(.collection(id)) {
            try bus.call(SecretBus.servicePath, SecretBus.gnomeKeyring, "CreateWithMasterPassword", [properties, master],
                         timeout: DaemonBus.passwordTimeout)
        }
        guard let path = reply.first?.objectPath, let created = SecretBus.collectionID(at: path) else {
            throw DaemonBus.unexpected("CreateWithMasterPassword")
        }
        if label != id.rawValue {
            try calling(.collection(created)) { try bus.set(path, SecretBus.collection, "Label", .string(label)) }
        }
        return created
    }

    func deleteCollection(_ id: CollectionID) throws {
        let reply = try calling(.collection(id)) { try bus.call(SecretBus.path(of: id), SecretBus.collection, "Delete") }
        try requireNoPrompt(reply.first, "Delete")
    }

    // MARK: Locking

    func lock(_ id: CollectionID) throws {
        let reply = try calling(.collection(id)) {
            try bus.call(SecretBus.servicePath, SecretBus.service, "Lock", [.objectPathArray([SecretBus.path(of: id)])])
        }
        try requireNoPrompt(reply.last, "Lock")
    }

    func unlock(_ id: CollectionID, password: SecureBytes) throws {
        let master = try session().encode(password)
        _ = try calling(.collection(id)) {
            try bus.call(SecretBus.servicePath, SecretBus.gnomeKeyring, "UnlockWithMasterPassword",
                         [.objectPath(SecretBus.path(of: id)), master], timeout: DaemonBus.passwordTimeout)
        }
    }

    func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws {
        let original = try session().encode(old), master = try session().encode(new)
        _ = try calling(.collection(id)) {
            try bus.call(SecretBus.servicePath, SecretBus.gnomeKeyring, "ChangeWithMasterPassword",
                         [.objectPath(SecretBus.path(of: id)), original, master], timeout: DaemonBus.passwordTimeout)
        }
    }

    // MARK: Items

    func add(_ item: NewItem, to id: CollectionID, replace: Bool) throws -> (reference: ItemReference, replaced: Bool) {
        let existing = try exactMatches(of: item.attributes, in: id)
        if !replace && !existing.isEmpty { throw CofferError.duplicateItem }
        let properties = DBusValue.variantDictionary([
            "org.freedesktop.Secret.Item.Label": .string(item.label),
            "org.freedesktop.Secret.Item.Attributes": .stringDictionary(item.attributes),
        ])
        let secret = try session().encode(item.secret.bytes, contentType: item.secret.contentType)
        let reply = try calling(.item(id)) {
            try bus.call(SecretBus.path(of: id), SecretBus.collection, "CreateItem", [properties, secret, .boolean(replace)])
        }
        guard reply.count == 2, let path = reply[0].objectPath, let reference = SecretBus.reference(at: path) else {
            throw DaemonBus.unexpected("CreateItem")
        }
        try requireNoPrompt(reply[1], "CreateItem")
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
        let secret = try changes.secret.map { try session().encode($0.bytes, contentType: $0.contentType) }
        for reference in references {
            let path = SecretBus.path(of: reference)
            try calling(.item(id)) {
                if let label = changes.label { try bus.set(path, SecretBus.item, "Label", .string(label)) }
                if let attributes = changes.attributes {
                    try bus.set(path, SecretBus.item, "Attributes", .stringDictionary(attributes))
                }
                if let secret { _ = try bus.call(path, SecretBus.item, "SetSecret", [secret]) }
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
            let reply = try calling(.item(id)) { try bus.call(SecretBus.path(of: reference), SecretBus.item, "Delete") }
            try requireNoPrompt(reply.first, "Delete")
        }
        return references
    }

    // MARK: Helpers

    /// The transfer session, opened on first use.
    private func session() throws -> DaemonSession {
        if let openedSession { return openedSession }
        let opened = try calling(.service) { try DaemonSession.open(on: bus) }
        openedSession = opened
        return opened
    }

    /// Runs `body`, turning D-Bus errors into coffer's (see `DaemonErrors`).
    @discardableResult
    private func calling<T>(_ subject: DaemonErrors.Subject, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DBusError {
            throw DaemonErrors.translate(error, about: subject)
        }
    }

    private func scope(of query: Query) throws -> CollectionID {
        guard let id = query.collection else { throw CLIError.usage("no collection given") }
        return id
    }

    private func isLocked(_ id: CollectionID) throws -> Bool {
        let value = try calling(.collection(id)) { try bus.get(SecretBus.path(of: id), SecretBus.collection, "Locked") }
        guard let locked = value.bool else { throw DaemonBus.unexpected("Locked") }
        return locked
    }

    /// The items of the query's collection that carry its attributes, by ascending id (only
    /// the first with `.one`). Works while the collection is locked.
    private func matches(of query: Query) throws -> [ItemReference] {
        let id = try scope(of: query)
        let reply = try calling(.collection(id)) {
            try bus.call(SecretBus.path(of: id), SecretBus.collection, "SearchItems", [.stringDictionary(query.attributes)])
        }
        guard let paths = reply.first?.objectPathArray else { throw DaemonBus.unexpected("SearchItems") }
        let references = paths.compactMap(SecretBus.reference(at:)).filter { $0.collection == id }.sorted { $0.item < $1.item }
        return query.limit == .one ? Array(references.prefix(1)) : references
    }

    /// The ids of the items of `id` whose attributes are exactly `attributes`.
    private func exactMatches(of attributes: Attributes, in id: CollectionID) throws -> [ItemID] {
        try matches(of: Query(attributes: attributes, collection: id)).filter { reference in
            let value = try calling(.item(id)) { try bus.get(SecretBus.path(of: reference), SecretBus.item, "Attributes") }
            return value.stringDictionary == attributes
        }.map(\.item)
    }

    /// Label, attributes and times (Secret Service items have no content type property: it
    /// travels with the secret, and listings do not show it).
    private func metadata(of reference: ItemReference) throws -> ItemMetadata {
        let values = try calling(.item(reference.collection)) { try bus.getAll(SecretBus.path(of: reference), SecretBus.item) }
        guard let label = values["Label"]?.string, let attributes = values["Attributes"]?.stringDictionary else {
            throw DaemonBus.unexpected("GetAll")
        }
        return ItemMetadata(label: label, attributes: attributes, contentType: "text/plain",
                            created: values["Created"]?.uint64 ?? 0, modified: values["Modified"]?.uint64 ?? 0)
    }

    /// How many secrets one GetSecrets call asks for: at most 8 MiB of secrets, well below
    /// what one D-Bus reply may carry.
    static let secretsPerCall = 32

    /// The secrets of `references` (one collection) from GetSecrets calls of `secretsPerCall`
    /// items, each decoded into secure memory only when `body` gets it.
    func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws {
        guard let collection = references.first?.collection else { return }
        let session = try session()
        for start in stride(from: 0, to: references.count, by: Self.secretsPerCall) {
            let batch = references[start..<min(start + Self.secretsPerCall, references.count)]
            let reply = try calling(.item(collection)) {
                try bus.call(SecretBus.servicePath, SecretBus.service, "GetSecrets",
                             [.objectPathArray(batch.map(SecretBus.path(of:))), .objectPath(session.path)])
            }
            guard let entries = reply.first?.dictionaryEntries else { throw DaemonBus.unexpected("GetSecrets") }
            for entry in entries {
                guard let path = entry.key.objectPath, let reference = SecretBus.reference(at: path),
                      let position = batch.firstIndex(of: reference) else { throw DaemonBus.unexpected("GetSecrets") }
                try body(position, try session.decode(entry.value))
            }
        }
    }

    /// cofferd never answers with a prompt to the calls coffer makes; another service might.
    private func requireNoPrompt(_ value: DBusValue?, _ what: String) throws {
        guard let prompt = value?.objectPath else { throw DaemonBus.unexpected(what) }
        guard prompt == SecretBus.none else {
            throw CLIError.storeFailure("the Secret Service wants to show a prompt for \(what), which coffer does not support; use its own tools (or cofferd)")
        }
    }
}
