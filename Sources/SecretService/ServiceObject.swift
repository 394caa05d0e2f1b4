import CofferCore
import CofferCrypto
import DBusKit
import SecretServiceProtocol
import Synchronization

/// `/org/freedesktop/secrets`: org.freedesktop.Secret.Service plus gnome-keyring's internal
/// interface for password operations without a dialog.
struct ServiceObject: DBusObject {
    let server: SecretServer

    var interfaces: [InterfaceDescription] { [ServiceInterface.description, GnomeKeyringInterface.description] }

    typealias Service = ServiceInterface
    typealias GnomeKeyring = GnomeKeyringInterface

    static let methods = MethodTable<ServiceObject>()
        .on(Service.OpenSession.self) { object, input, call in
            try object.server.openSession(algorithm: input.algorithm, input: input.input.value, caller: call.sender)
        }
        .on(Service.CreateCollection.self) { try $0.createCollection($1, caller: $2.sender) }
        .on(Service.SearchItems.self) { object, input, _ in try object.search(input.attributes) }
        .on(Service.Unlock.self) { try $0.unlock($1.objects, caller: $2.sender) }
        .on(Service.Lock.self) { object, input, call in
            .init(locked: object.lock(input.objects, caller: call.sender), prompt: SecretPath.none)
        }
        .on(Service.LockService.self) { object, _, call in
            _ = object.lock(object.server.collectionPaths(), caller: call.sender, includingSession: true)
            return NoArguments()
        }
        .on(Service.ChangeLock.self) { try $0.changePasswordPrompt($1.collection, caller: $2.sender) }
        .on(GnomeKeyring.ChangeWithPrompt.self) { try $0.changePasswordPrompt($1.collection, caller: $2.sender) }
        .deferring(Service.GetSecrets.self) { object, input, call in
            try object.getSecrets(input.items, session: input.session, call: call)
            return .deferred
        }
        .on(Service.ReadAlias.self) { object, input, _ in
            .init(collection: try object.server.keychain.resolveAlias(input.name).map(SecretPath.collection) ?? SecretPath.none)
        }
        .deferring(Service.SetAlias.self) { object, input, call in
            try object.setAlias(input.name, to: input.collection, call: call)
            return .deferred
        }
        .deferring(GnomeKeyring.CreateWithMasterPassword.self) { try $0.createWithPassword($1, call: $2) }
        .deferring(GnomeKeyring.UnlockWithMasterPassword.self) { try $0.unlockWithPassword($1, call: $2) }
        .deferring(GnomeKeyring.ChangeWithMasterPassword.self) { try $0.changeWithPassword($1, call: $2) }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        .objectPathArray(server.collectionPaths())
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }

    // MARK: Collections

    private func createCollection(_ input: Service.CreateCollection.Input, caller: String) throws -> Service.CreateCollection.Output {
        let label = input.properties.label ?? "Unnamed"
        try Limits.validate(label: label)
        let alias = input.alias
        if !alias.isEmpty, let existing = try server.keychain.resolveAlias(alias) {
            return .init(collection: SecretPath.collection(existing), prompt: SecretPath.none)
        }
        if !alias.isEmpty, CollectionID(alias) == nil {
            throw DBusError.invalidArgs("alias names are letters, digits and _")
        }
        let prompt = try server.makePrompt(owner: caller, action: .createCollection(label: label, alias: alias))
        return .init(collection: SecretPath.none, prompt: prompt)
    }

    private func search(_ attributes: [String: String]) throws -> Service.SearchItems.Output {
        let results = try server.keychain.search(Query(attributes: attributes))
        return .init(unlocked: results.filter { !$0.isLocked }.map { SecretPath.item($0.reference) },
                     locked: results.filter(\.isLocked).map { SecretPath.item($0.reference) })
    }

    /// Sets or removes an alias, off the loop and one change at a time (each is checked against
    /// the aliases the one before left); `default`, while it names a collection whose policy
    /// is not `open`, is not pointed elsewhere over the bus (`Keychain.collectionGuarding`):
    /// `coffer alias` does that with the collection's password.
    private func setAlias(_ name: String, to path: ObjectPath, call: MethodCall) throws {
        var id: CollectionID?
        if path != SecretPath.none {
            guard let target = server.collectionID(at: path) else { throw SecretServiceError.noSuchObject("no collection at \(path)") }
            id = target
        }
        let keychain = server.keychain
        server.aliasWrites.async { [id] in
            do {
                try keychain.checkAlias(name, to: id)
                if let guarded = try keychain.collectionGuarding(alias: name, changedTo: id) {
                    let command = id.map { "coffer alias set \(name) --collection \($0)" } ?? "coffer alias remove \(name)"
                    throw DBusError.accessDenied("Access denied: the default collection is '\(guarded)', whose items belong to the "
                        + "applications that made them; making another the default would send their new secrets there, so it "
                        + "takes the password of '\(guarded)': \(command)")
                }
                try keychain.setAlias(name, to: id)
                call.reply([])
            } catch {
                call.fail(error)
            }
        }
    }

    private func changePasswordPrompt(_ path: ObjectPath, caller: String) throws -> PromptArgument {
        guard let id = server.collectionID(at: path) else { throw SecretServiceError.noSuchObject("no such collection") }
        return .init(prompt: try server.makePrompt(owner: caller, action: .changePassword(id)))
    }

    // MARK: Locking

    private func unlock(_ paths: [ObjectPath], caller: String) throws(DBusError) -> Service.Unlock.Output {
        var unlocked: [ObjectPath] = []
        var pending: [(ObjectPath, CollectionID)] = []
        for path in paths {
            guard let id = server.collectionID(at: path) ?? server.itemReference(at: path)?.collection else { continue }
            // A damaged collection says so rather than being skipped.
            let info: CollectionInfo
            do { info = try server.keychain.info(id) } catch { throw DBusError(converting: error) }
            if info.isLocked { pending.append((path, id)) } else { unlocked.append(path) }
        }
        guard !pending.isEmpty else { return .init(unlocked: unlocked, prompt: SecretPath.none) }
        return .init(unlocked: unlocked, prompt: try server.makePrompt(owner: caller, action: .unlock(pending)))
    }

    /// Locks the collections `paths` name. The session collection has no lock: it is left
    /// alone, except by `LockService` (`includingSession`), which empties it as gnome-keyring does.
    private func lock(_ paths: [ObjectPath], caller: String, includingSession: Bool = false) -> [ObjectPath] {
        var locked: [ObjectPath] = []
        for path in paths {
            guard let id = server.collectionID(at: path) ?? server.itemReference(at: path)?.collection,
                  id != .session || includingSession, server.lockCollection(id, by: caller) else { continue }
            locked.append(path)
        }
        return locked
    }

    // MARK: Secrets

    /// Every requested secret that exists in an unlocked collection, encoded for the caller's
    /// session; missing and locked items are left out (as gnome-keyring and oo7 do), any other
    /// failure fails the whole call: a reply never silently lacks a secret. Each secret is
    /// marshalled into the reply as soon as it is read and released right after, so the call
    /// holds one secret in secure memory at a time, whatever their number.
    private func getSecrets(_ paths: [ObjectPath], session path: ObjectPath, call: MethodCall) throws {
        _ = try server.session(at: path, for: call.sender)
        let server = self.server
        let named = paths.compactMap { path in server.itemReference(named: path).map { (path, $0) } }
        server.gate.authorize(.read, of: named.map(\.1), by: call.sender) { verdict in
            // Items the application may not read are left out, as locked ones are; when that
            // leaves nothing, the call fails saying why (an empty answer would say nothing).
            let allowed = zip(named, verdict.verdicts).compactMap { $1 == .allowed ? $0 : nil }
            let refused = verdict.refused(among: named.map(\.1))
            if allowed.isEmpty, let (first, why) = refused.first {
                call.fail(AccessGate.refusal(of: first, to: verdict.application, because: why, others: refused.count - 1))
                return
            }
            do {
                let session = try server.session(at: path, for: call.sender)
                var replyBytes = 0
                try call.replyWithDictionary(keySignature: .objectPath, valueSignature: WireSecret.dbusType) { add in
                    try session.encodeEach(upTo: allowed.count) { encode in
                        try server.keychain.forEachSecret(of: allowed.map(\.1)) { position, secret in
                            replyBytes += secret.bytes.count + AES128CBC.blockLength + 256
                            guard replyBytes <= SecretServer.maxReplyBytes else {
                                throw SecretServiceError.limitsExceeded(
                                    "the \(allowed.count) secrets asked for take more than the \(SecretServer.maxReplyBytes >> 20) MiB one D-Bus reply may carry; ask for fewer items at a time")
                            }
                            try add(.objectPath(allowed[position].0), try encode(secret).dbusValue)
                        }
                    }
                }
            } catch {
                call.fail(error)
            }
        }
    }

    // MARK: gnome-keyring's internal interface

    private func createWithPassword(_ input: GnomeKeyring.CreateWithMasterPassword.Input, call: MethodCall) throws -> MethodResult {
        let label = input.properties.label ?? "Unnamed"
        let password = try server.secret(from: input.master, of: call).bytes
        let server = self.server
        let created = Mutex<CollectionID?>(nil)
        return server.checkingPassword(call, of: nil, {
            let id = try server.keychain.createCollection(label: label, password: password)
            created.withLock { $0 = id }
            return CollectionArgument(collection: SecretPath.collection(id))
        }, then: {
            guard let id = created.withLock({ $0 }) else { return }
            server.log("collection \(id) created by \(call.sender)")
            server.emit(SecretPath.service, Service.name, Service.Signal.collectionCreated, [.objectPath(SecretPath.collection(id))])
            server.collectionsChanged()
        })
    }

    private func unlockWithPassword(_ input: GnomeKeyring.UnlockWithMasterPassword.Input, call: MethodCall) throws -> MethodResult {
        guard let id = server.collectionID(at: input.collection) else {
            throw SecretServiceError.noSuchObject("no collection at \(input.collection)")
        }
        let password = try server.secret(from: input.master, of: call).bytes
        let server = self.server
        guard try server.keychain.info(id).isLocked else { return .empty }
        return server.checkingPassword(call, of: id, {
            try server.keychain.unlock(id, password: password)
            return NoArguments()
        }, then: {
            server.log("collection \(id) unlocked by \(call.sender)")
            server.auditCollection(.unlock, id, by: call.sender, detail: "password given over the bus")
            server.lockStateChanged(id)
        }, failed: { error in
            server.auditCollection(.unlock, id, by: call.sender, outcome: .failed, detail: (error as? CofferError) == .authenticationFailed ? "wrong password" : "\(error)")
        })
    }

    private func changeWithPassword(_ input: GnomeKeyring.ChangeWithMasterPassword.Input, call: MethodCall) throws -> MethodResult {
        guard let id = server.collectionID(at: input.collection) else {
            throw SecretServiceError.noSuchObject("no collection at \(input.collection)")
        }
        let old = try server.secret(from: input.original, of: call).bytes
        let new = try server.secret(from: input.master, of: call).bytes
        let server = self.server
        return server.checkingPassword(call, of: id, {
            try server.keychain.changePassword(id, from: old, to: new)
            return NoArguments()
        }, then: {
            server.log("password of collection \(id) changed by \(call.sender)")
        })
    }
}
