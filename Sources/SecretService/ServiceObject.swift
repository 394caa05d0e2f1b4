import CofferCore
import CofferCrypto
import DBusKit
import Synchronization

/// `/org/freedesktop/secrets`: org.freedesktop.Secret.Service plus gnome-keyring's internal
/// interface for password operations without a dialog.
struct ServiceObject: DBusObject {
    let server: SecretServer

    var interfaces: [InterfaceDescription] { [SecretInterface.serviceDescription, SecretInterface.gnomeKeyringDescription] }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        .objectPathArray(server.collectionPaths())
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        let a = call.arguments
        switch (call.interface, call.member) {
        case (SecretInterface.service, "OpenSession"):
            return .reply(try server.openSession(algorithm: a[0].string!, input: a[1].variantValue!, caller: call.sender))
        case (SecretInterface.service, "CreateCollection"):
            return .reply(try createCollection(properties: a[0].variantDictionary!, alias: a[1].string!, caller: call.sender))
        case (SecretInterface.service, "SearchItems"):
            let results = try server.keychain.search(Query(attributes: a[0].stringDictionary!))
            let unlocked = results.filter { !$0.isLocked }.map { SecretPath.item($0.reference) }
            let locked = results.filter(\.isLocked).map { SecretPath.item($0.reference) }
            return .reply([.objectPathArray(unlocked), .objectPathArray(locked)])
        case (SecretInterface.service, "Unlock"):
            return .reply(try unlock(a[0].objectPathArray!, caller: call.sender))
        case (SecretInterface.service, "Lock"):
            return .reply([.objectPathArray(lock(a[0].objectPathArray!, caller: call.sender)), .objectPath(SecretPath.none)])
        case (SecretInterface.service, "LockService"):
            _ = lock(server.collectionPaths(), caller: call.sender, includingSession: true)
            return .empty
        case (SecretInterface.service, "ChangeLock"), (SecretInterface.gnomeKeyring, "ChangeWithPrompt"):
            guard let id = server.collectionID(at: a[0].objectPath!) else { throw SecretError.noSuchObject("no such collection") }
            return .reply([.objectPath(try server.makePrompt(owner: call.sender, action: .changePassword(id)))])
        case (SecretInterface.service, "GetSecrets"):
            return .reply([try getSecrets(a[0].objectPathArray!, session: a[1].objectPath!, caller: call.sender)])
        case (SecretInterface.service, "ReadAlias"):
            let target = try server.keychain.resolveAlias(a[0].string!)
            return .reply([.objectPath(target.map(SecretPath.collection) ?? SecretPath.none)])
        case (SecretInterface.service, "SetAlias"):
            try setAlias(a[0].string!, to: a[1].objectPath!)
            return .empty
        case (SecretInterface.gnomeKeyring, "CreateWithMasterPassword"):
            return try createWithPassword(properties: a[0].variantDictionary!, master: a[1], call: call)
        case (SecretInterface.gnomeKeyring, "UnlockWithMasterPassword"):
            return try unlockWithPassword(a[0].objectPath!, master: a[1], call: call)
        case (SecretInterface.gnomeKeyring, "ChangeWithMasterPassword"):
            return try changeWithPassword(a[0].objectPath!, original: a[1], master: a[2], call: call)
        default:
            throw DBusError.unknownMethod("no method \(call.interface).\(call.member)")
        }
    }

    // MARK: Collections

    static let collectionLabelKey = "org.freedesktop.Secret.Collection.Label"

    private func label(from properties: [String: DBusValue]) throws(DBusError) -> String {
        guard let value = properties[Self.collectionLabelKey]?.variantValue ?? properties[Self.collectionLabelKey] else {
            return "Unnamed"
        }
        guard let label = value.string else { throw .invalidArgs("\(Self.collectionLabelKey) must be a string") }
        return label
    }

    private func createCollection(properties: [String: DBusValue], alias: String, caller: String) throws -> [DBusValue] {
        let label = try label(from: properties)
        try Limits.validate(label: label)
        if !alias.isEmpty, let existing = try server.keychain.resolveAlias(alias) {
            return [.objectPath(SecretPath.collection(existing)), .objectPath(SecretPath.none)]
        }
        if !alias.isEmpty, CollectionID(alias) == nil {
            throw DBusError.invalidArgs("alias names are letters, digits and _")
        }
        let prompt = try server.makePrompt(owner: caller, action: .createCollection(label: label, alias: alias))
        return [.objectPath(SecretPath.none), .objectPath(prompt)]
    }

    private func setAlias(_ name: String, to path: ObjectPath) throws {
        if path == SecretPath.none {
            try server.keychain.setAlias(name, to: nil)
            return
        }
        guard let id = server.collectionID(at: path) else { throw SecretError.noSuchObject("no collection at \(path)") }
        try server.keychain.setAlias(name, to: id)
    }

    // MARK: Locking

    private func unlock(_ paths: [ObjectPath], caller: String) throws(DBusError) -> [DBusValue] {
        var unlocked: [ObjectPath] = []
        var pending: [(ObjectPath, CollectionID)] = []
        for path in paths {
            guard let id = server.collectionID(at: path) ?? server.itemReference(at: path)?.collection else { continue }
            // A damaged collection says so rather than being skipped.
            let info: CollectionInfo
            do { info = try server.keychain.info(id) } catch { throw DBusError(converting: error) }
            if info.isLocked { pending.append((path, id)) } else { unlocked.append(path) }
        }
        guard !pending.isEmpty else { return [.objectPathArray(unlocked), .objectPath(SecretPath.none)] }
        let prompt = try server.makePrompt(owner: caller, action: .unlock(pending))
        return [.objectPathArray(unlocked), .objectPath(prompt)]
    }

    /// Locks the collections `paths` name. The session collection has no lock: it is left
    /// alone, except by `LockService` (`includingSession`), which empties it as gnome-keyring does.
    private func lock(_ paths: [ObjectPath], caller: String, includingSession: Bool = false) -> [ObjectPath] {
        var locked: [ObjectPath] = []
        for path in paths {
            guard let id = server.collectionID(at: path) ?? server.itemReference(at: path)?.collection,
                  id != .session || includingSession, let before = try? server.keychain.info(id) else { continue }
            guard (try? server.keychain.lock(id)) != nil else { continue }
            locked.append(path)
            if !before.isLocked && id != .session {
                server.log("collection \(id) locked by \(caller)")
                server.lockStateChanged(id)
            }
        }
        return locked
    }

    // MARK: Secrets

    /// Every requested secret that exists in an unlocked collection, encoded for the caller's
    /// session; missing and locked items are left out (as gnome-keyring and oo7 do), any other
    /// failure fails the whole call: a reply never silently lacks a secret. Secrets are read one
    /// at a time, so the call needs secure memory for one secret, whatever their number.
    private func getSecrets(_ paths: [ObjectPath], session path: ObjectPath, caller: String) throws -> DBusValue {
        let session = try server.session(at: path, for: caller)
        let named = paths.compactMap { path in server.itemReference(named: path).map { (path, $0) } }
        var entries: [DBusValue.DictionaryEntry] = []
        entries.reserveCapacity(named.count)
        var replyBytes = 0
        try server.keychain.forEachSecret(of: named.map(\.1)) { position, secret in
            replyBytes += secret.bytes.count + AES128CBC.blockLength + 256
            guard replyBytes <= SecretServer.maxReplyBytes else {
                throw SecretError.limitsExceeded(
                    "the \(named.count) secrets asked for take more than the \(SecretServer.maxReplyBytes >> 20) MiB one D-Bus reply may carry; ask for fewer items at a time")
            }
            entries.append(.init(key: .objectPath(named[position].0), value: try session.encode(secret)))
        }
        return .dictionary(keySignature: .objectPath, valueSignature: "(oayays)", entries)
    }

    // MARK: gnome-keyring's internal interface

    private func password(_ value: DBusValue, caller: String) throws -> SecureBytes {
        try server.secret(from: value, for: caller).bytes
    }

    private func createWithPassword(properties: [String: DBusValue], master: DBusValue, call: MethodCall) throws -> MethodResult {
        let label = try label(from: properties)
        let password = try password(master, caller: call.sender)
        let server = self.server
        let created = Mutex<CollectionID?>(nil)
        return server.offLoop(call, {
            let id = try server.keychain.createCollection(label: label, password: password)
            created.withLock { $0 = id }
            return [.objectPath(SecretPath.collection(id))]
        }, then: {
            guard let id = created.withLock({ $0 }) else { return }
            server.log("collection \(id) created by \(call.sender)")
            server.emit(SecretPath.service, SecretInterface.service, "CollectionCreated", [.objectPath(SecretPath.collection(id))])
            server.collectionsChanged()
        })
    }

    private func unlockWithPassword(_ path: ObjectPath, master: DBusValue, call: MethodCall) throws -> MethodResult {
        guard let id = server.collectionID(at: path) else { throw SecretError.noSuchObject("no collection at \(path)") }
        let password = try password(master, caller: call.sender)
        let server = self.server
        guard try server.keychain.info(id).isLocked else { return .empty }
        return server.offLoop(call, {
            try server.keychain.unlock(id, password: password)
            return []
        }, then: {
            server.log("collection \(id) unlocked by \(call.sender)")
            server.lockStateChanged(id)
        })
    }

    private func changeWithPassword(_ path: ObjectPath, original: DBusValue, master: DBusValue, call: MethodCall) throws -> MethodResult {
        guard let id = server.collectionID(at: path) else { throw SecretError.noSuchObject("no collection at \(path)") }
        let old = try password(original, caller: call.sender)
        let new = try password(master, caller: call.sender)
        let server = self.server
        return server.offLoop(call, {
            try server.keychain.changePassword(id, from: old, to: new)
            return []
        }, then: {
            server.log("password of collection \(id) changed by \(call.sender)")
        })
    }
}
