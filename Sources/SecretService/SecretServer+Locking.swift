import CofferCore
import DBusKit
import SecretServiceProtocol

/// Locking collections: at a client's request or by themselves (see `AutoLock`), and telling
/// every client about it.
extension SecretServer {
    /// Locks collections when `trigger` happens (called on the loop thread).
    func lock(on trigger: AutoLock.Trigger) {
        autoLock.lock(on: trigger)
    }

    /// Locks `id` at the request of `client`, or by itself `because` (then no client):
    /// logged, audited and announced when it was unlocked. False when it cannot be locked.
    @discardableResult
    func lockCollection(_ id: CollectionID, by client: String? = nil, because reason: String? = nil, keepingKey: Bool = false) -> Bool {
        guard let before = try? keychain.info(id), (try? keychain.lock(id, keepingKey: keepingKey)) != nil else { return false }
        guard !before.isLocked, id != .session else { return true }
        if let client {
            log("collection \(id) locked by \(client)")
            auditCollection(.lock, id, by: client)
        } else {
            log("collection \(id) locked: \(reason ?? "by itself")\(keepingKey ? "; a fingerprint may unlock it again within its window" : "")")
            gate.record(AuditEvent(action: .lock, outcome: .ok, collection: id, label: before.label, detail: reason))
        }
        lockStateChanged(id)
        return true
    }

    /// Dismisses every pending prompt (their clients get `Completed(true, …)`) and closes the
    /// dialogs on screen: after collections locked by themselves, nobody is left typing into
    /// a dialog that belonged to before.
    func dismissPromptsAndDialogs() {
        for prompt in prompts.values { prompt.dismiss() }
        passwords?.closeDialogs()
        gate.closeDialogs()
    }

    /// Announces a collection's new lock state, then its items' (as gnome-keyring does, so that
    /// clients' cached item proxies see `Locked` change).
    func lockStateChanged(_ id: CollectionID, byFingerprint: Bool = false) {
        let path = SecretPath.collection(id)
        let locked = (try? keychain.info(id).isLocked) ?? true
        if locked {
            autoLock.locked(id)
        } else {
            if !byFingerprint { autoLock.unlockedWithPassword(id) }
            autoLock.used(id)
        }
        emitPropertiesChanged(path, CollectionInterface.name, changed: [CollectionInterface.Property.locked: .boolean(locked)])
        emit(SecretPath.service, ServiceInterface.name, ServiceInterface.Signal.collectionChanged, [.objectPath(path)])
        announceLockState(locked, of: itemPaths(in: id)[...], in: path)
    }

    /// `PropertiesChanged(Locked)` on each item and `ItemChanged` on its collection, a few
    /// hundred items per loop iteration so that other clients' calls are served in between.
    private func announceLockState(_ locked: Bool, of items: ArraySlice<ObjectPath>, in collection: ObjectPath) {
        for item in items.prefix(256) {
            emitPropertiesChanged(item, ItemInterface.name, changed: [ItemInterface.Property.locked: .boolean(locked)])
            emit(collection, CollectionInterface.name, CollectionInterface.Signal.itemChanged, [.objectPath(item)])
        }
        let rest = items.dropFirst(256)
        guard !rest.isEmpty else { return }
        connection.post { [self] in announceLockState(locked, of: rest, in: collection) }
    }
}
