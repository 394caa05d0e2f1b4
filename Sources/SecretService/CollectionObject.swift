import CofferCore
import DBusKit
import SecretServiceProtocol

/// A collection (also reached through its aliases): org.freedesktop.Secret.Collection.
struct CollectionObject: DBusObject {
    let server: SecretServer
    let id: CollectionID

    var interfaces: [InterfaceDescription] { [CollectionInterface.description, CofferCollectionInterface.description] }
    private var path: ObjectPath { SecretPath.collection(id) }

    typealias Collection = CollectionInterface

    static let methods = MethodTable<CollectionObject>()
        .deferring(Collection.Delete.self) { object, _, call in
            // Deleting a collection deletes every item in it: allowed only where each may be
            // deleted (its creator, a grant, the user, the policy).
            let items = object.server.itemPaths(in: object.id).compactMap(object.server.itemReference(named:))
            object.server.gate.authorize(.deleteCollection, of: items, by: call.sender) { verdict in
                // Locked, it cannot tell whose its items are.
                if verdict.verdicts.contains(.locked) { return call.fail(CofferError.locked(object.id.rawValue)) }
                if let (first, why) = verdict.refused(among: items).first {
                    let others = verdict.refused(among: items).count - 1
                    return call.fail(AccessGate.refusal(.deleteCollection, of: first, to: verdict.application, because: why, others: others))
                }
                object.delete(call: call)
            }
            return .deferred
        }
        .on(Collection.SearchItems.self) { object, input, _ in
            let results = try object.server.keychain.search(Query(attributes: input.attributes, collection: object.id))
            return .init(results: results.map { SecretPath.item($0.reference) })
        }
        .deferring(Collection.CreateItem.self) { object, input, call in
            // The new item records the application that created it.
            object.server.gate.application(of: call.sender) { identified in
                do {
                    try object.createItem(input, call: call, creator: identified?.application)
                } catch {
                    call.fail(error)
                }
            }
            return .deferred
        }

        .deferring(CofferCollectionInterface.UnlockWithTPM.self) { object, input, call in
            try object.unlockWithTPM(pin: input.secret, call: call)
        }

    /// As UnlockWithMasterPassword, with the TPM slot instead of the password: checked as
    /// passwords are (one at a time per collection, under the throttle), audited the same way.
    private func unlockWithTPM(pin wire: WireSecret, call: MethodCall) throws -> MethodResult {
        let server = self.server, id = self.id
        guard let unlock = server.tpmUnlock else { throw CofferError.invalidArgument("this cofferd cannot use a TPM") }
        let pin = try server.secret(from: wire, of: call).bytes
        guard try server.keychain.info(id).isLocked else { return .empty }
        return server.checkingPassword(call, of: id, {
            try unlock(id, pin)
            return NoArguments()
        }, then: {
            server.log("collection \(id) unlocked with the TPM by \(call.sender)")
            server.auditCollection(.unlock, id, by: call.sender, detail: "TPM key slot, asked over the bus")
            server.lockStateChanged(id)
        }, failed: { error in
            server.auditCollection(.unlock, id, by: call.sender, outcome: .failed,
                                   detail: (error as? CofferError) == .authenticationFailed ? "wrong TPM PIN" : "TPM: \(error)")
        })
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        let info = try server.keychain.info(id)
        if interface == CofferCollectionInterface.name { return .string(info.recovery ?? "") }
        switch name {
        case Collection.Property.items: return .objectPathArray(server.itemPaths(in: id))
        case Collection.Property.label: return .string(info.label)
        case Collection.Property.locked: return .boolean(info.isLocked)
        case Collection.Property.created: return .uint64(info.created)
        default: return .uint64(info.modified)
        }
    }

    /// Only `Label` is writable; the object server has checked the value is a string. The
    /// label is written off the loop, in turn with the collection's item changes.
    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        let label = try String(dbusValue: value)
        let (server, id, path, keychain) = (server, id, path, server.keychain)
        server.perform(in: id) {
            do throws(CofferError) {
                try keychain.collection(id).setLabel(label)
            } catch {
                return call.fail(error)
            }
            call.connection.post {
                server.emitPropertiesChanged(path, Collection.name, changed: [name: value])
                server.emit(SecretPath.service, ServiceInterface.name, ServiceInterface.Signal.collectionChanged, [.objectPath(path)])
                call.reply([])
            }
        }
        return .deferred
    }

    /// Deletes the collection off the loop, after the item changes queued before; answers `call`.
    private func delete(call: MethodCall) {
        let label = try? server.keychain.info(id).label
        let (server, id, path, keychain) = (server, id, path, server.keychain)
        server.perform(in: id) {
            do throws(CofferError) {
                try keychain.deleteCollection(id)
            } catch {
                return call.fail(error)
            }
            call.connection.post {
                server.forgetWriter(of: id)
                server.log("collection \(id) deleted by \(call.sender)")
                server.audit(by: call.sender) { application in
                    AuditEvent(action: .delete, outcome: .ok, application: application, collection: id, label: label, detail: "collection deleted")
                }
                server.emit(SecretPath.service, ServiceInterface.name, ServiceInterface.Signal.collectionDeleted, [.objectPath(path)])
                server.collectionsChanged()
                call.reply(PromptArgument(prompt: SecretPath.none))
            }
        }
    }

    /// Answers `call` once the item is durable (or a prompt must unlock the collection first).
    private func createItem(_ input: Collection.CreateItem.Input, call: MethodCall, creator: Application?) throws {
        let caller = call.sender
        var attributes = input.properties.attributes ?? [:]
        if let type = input.properties.type, attributes[ItemClass.schemaAttribute] == nil {
            attributes[ItemClass.schemaAttribute] = type
        }
        try Limits.validate(label: input.properties.label ?? "")
        try Limits.validate(attributes: attributes)
        // Only the Secret portal makes an application's key (SecretPortal).
        if ApplicationKey.isKey(attributes) { throw DBusError.accessDenied("Access denied: \(ApplicationKey.plantRefusal)") }
        let secret = try server.secret(from: input.secret, of: call)
        let item = NewItem(label: input.properties.label ?? "", attributes: attributes, secret: secret, owner: caller,
                           creator: creator)
        if try server.keychain.collection(id).isLocked {
            // As oo7: a prompt that unlocks the collection, then stores the item.
            let prompt = try server.makePrompt(owner: caller, action: .createItem(id, item, replace: input.replace))
            return call.reply(Collection.CreateItem.Output(item: SecretPath.none, prompt: prompt))
        }
        guard input.replace else { return store(item, replacing: [], call: call) }
        // Replace as gnome-keyring and oo7 do: every item whose attributes include these; each
        // only where the caller may change it. One it may not is never silently replaced.
        let matches = try server.keychain.replaceable(by: attributes, in: id)
        guard !matches.isEmpty else { return store(item, replacing: [], call: call) }
        let request = AccessRequest.change("replace")
        server.gate.authorize(request, of: matches, by: caller) { [self] verdict in
            if let (first, why) = verdict.refused(among: matches).first {
                let others = verdict.refused(among: matches).count - 1
                return call.fail(AccessGate.refusal(request, of: first, to: verdict.application, because: why, others: others))
            }
            store(item, replacing: zip(matches, verdict.verdicts).compactMap { $1 == .allowed ? $0.item : nil }, call: call)
        }
    }

    /// Stores `item`, overwriting the first of `replacing` that still exists (keeping its id
    /// and creator) and then deleting the others; answers `call` once the item is durable.
    private func store(_ item: NewItem, replacing: [ItemID], call: MethodCall) {
        // What runs after the reply holds the label, not the item: its secret is let go (and
        // wiped) as soon as the commit is done with it.
        let (server, id, label, caller) = (self.server, self.id, item.label, call.sender)
        server.write(.insert(item, onDuplicate: replacing.isEmpty ? .allow : .replacing(replacing)), in: id, by: caller, reply: { outcome in
            call.answer(outcome) { Collection.CreateItem.Output(item: SecretPath.item(ItemReference(collection: id, item: $0.id)), prompt: SecretPath.none) }
        }, then: { changed, application in
            let reference = ItemReference(collection: id, item: changed.id)
            server.auditWrite(.write, of: reference, by: application, detail: changed.isNew ? "created" : "replaced", label: label)
            server.itemsChanged(in: id, changed.isNew ? Collection.Signal.itemCreated : Collection.Signal.itemChanged, reference)
            // The other items it replaces (authorized with it) go now.
            for other in replacing where other != changed.id {
                server.write(.remove(other), in: id, by: caller, reply: { _ in }, then: { removed, application in
                    server.gate.record(AuditEvent(action: .delete, outcome: .ok, application: application, collection: id,
                                                  item: other, label: removed.label, detail: "replaced"))
                    server.itemsChanged(in: id, Collection.Signal.itemDeleted, ItemReference(collection: id, item: other))
                })
            }
        })
    }
}
