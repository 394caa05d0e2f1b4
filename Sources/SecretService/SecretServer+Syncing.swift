import CofferCore
import DBusKit
import SecretServiceProtocol

/// Changes that came from another device (through a synced folder): clients hear of them as
/// of any other change, and the audit log records them.
extension SecretServer {
    /// Announces `changes`, applied to collection `id`'s store: ItemCreated, ItemChanged or
    /// ItemDeleted for each, then the service's CollectionChanged; each is audited as a write
    /// made by no application of this machine.
    public func announceSyncedChanges(in id: CollectionID, _ changes: [SyncedChange]) {
        guard !changes.isEmpty else { return }
        for change in changes {
            let (item, member, action, label): (ItemID, String, AuditEvent.Action, String?) = switch change {
            case .created(let item, let label): (item, CollectionInterface.Signal.itemCreated, .write, label)
            case .changed(let item, let label): (item, CollectionInterface.Signal.itemChanged, .write, label)
            case .deleted(let item): (item, CollectionInterface.Signal.itemDeleted, .delete, nil)
            }
            let reference = ItemReference(collection: id, item: item)
            itemsChanged(in: id, member, reference)
            gate.record(AuditEvent(action: action, outcome: .ok, application: nil, collection: id, item: item, label: label,
                                   detail: "from another device, through the synced folder"))
        }
        connection.post { [self] in
            emit(SecretPath.service, ServiceInterface.name, ServiceInterface.Signal.collectionChanged, [.objectPath(SecretPath.collection(id))])
        }
    }

    /// Keeps what syncing collection `id` found wrong (none: it syncs well) for `coffer doctor`
    /// (`org.coffer.Daemon.SyncProblems`).
    public func reportSyncProblems(in id: CollectionID, _ problems: [String]) {
        syncProblems.withLock { $0[id] = problems.isEmpty ? nil : problems }
    }
}
