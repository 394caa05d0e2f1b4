import CofferCore
import DBusKit
import SecretServiceProtocol

/// What the server tells others of what happened: the audit log, and D-Bus signals.
extension SecretServer {
    // MARK: The audit log

    /// Records what `client` did, once it is known which application it is (at once when known).
    func audit(by client: String, _ event: @escaping (Application?) -> AuditEvent) {
        gate.application(of: client) { [gate] identified in gate.record(event(identified?.application)) }
    }

    /// Records a change to an item by `application` (nil: it could not be told); the caller
    /// has told `autoLock` of the use.
    /// `label`: the item's, when the caller has it (else it is read back).
    func auditWrite(_ action: AuditEvent.Action, of reference: ItemReference, by application: Application?, detail: String? = nil,
                    label knownLabel: String? = nil) {
        let label = knownLabel ?? (try? keychain.metadata(of: reference).label)
        gate.record(AuditEvent(action: action, outcome: .ok, application: application, collection: reference.collection,
                               item: reference.item, label: label, detail: detail))
    }

    /// Records an unlock or lock of collection `id` by `client`.
    func auditCollection(_ action: AuditEvent.Action, _ id: CollectionID, by client: String, outcome: AuditEvent.Outcome = .ok,
                         detail: String? = nil) {
        let label = try? keychain.info(id).label
        audit(by: client) { application in
            AuditEvent(action: action, outcome: outcome, application: application, collection: id, label: label, detail: detail)
        }
    }

    // MARK: Signals

    func emit(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              to destination: String? = nil) {
        try? connection.emitSignal(path: path, interface: interface, member: member, arguments: arguments,
                                   destination: destination)
    }

    func emitPropertiesChanged(_ path: ObjectPath, _ interface: String, changed: [String: DBusValue] = [:],
                               invalidated: [String] = []) {
        try? connection.emitPropertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
    }

    func collectionsChanged() {
        emitPropertiesChanged(SecretPath.service, ServiceInterface.name,
                              changed: [ServiceInterface.Property.collections: .objectPathArray(collectionPaths())])
    }

    /// Announces an item change after the current work on the loop thread (so after the reply
    /// of the call that made it, when that call answers on the loop), so that the caller does
    /// not wait for the bus to route the signals first.
    func itemsChanged(in id: CollectionID, _ member: String, _ reference: ItemReference) {
        connection.post { [self] in
            let collection = SecretPath.collection(id)
            emit(collection, CollectionInterface.name, member, [.objectPath(SecretPath.item(reference))])
            if member != CollectionInterface.Signal.itemChanged {
                // The list can be long: announce that it changed; clients re-read it if they care.
                emitPropertiesChanged(collection, CollectionInterface.name, invalidated: [CollectionInterface.Property.items])
            }
        }
    }
}
