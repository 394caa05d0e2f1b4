import CofferCore
import DBusKit

/// Writes: item changes go to each collection's `CollectionWriter`, off the loop.
extension SecretServer {
    /// Commits `change` by `client` to collection `id` off the loop, batched with other clients'
    /// changes. `reply` answers the caller on the writer's thread as soon as the change is
    /// durable (or has failed), without waiting for the loop thread to wake; after a success,
    /// `then` runs on the loop thread for what follows (the audit line, the signals), with the
    /// client's application. That is found before the write, while the client waits for its
    /// reply: a client may leave the bus as soon as it has it, and then cannot be told anymore.
    /// `then` is a follow-up, reserved before the write (`reserveFollowUp`) so that posting it
    /// wakes nobody: it runs once the loop has dispatched the next
    /// message, typically the same client's next call, so that it runs while that call's write
    /// is being flushed rather than delaying it; or after a millisecond if none comes. So the
    /// reply to a read that follows at once can leave before the write's signals (within that
    /// millisecond), and, rarely, the signals before the write's own reply. The collection
    /// counts as used (for the idle lock) when the change is handed to its writer.
    /// With `request`, a change to an existing item is first authorized as `AccessGate`
    /// decides (the item's creator, a grant, the user, or the policy): refused, it fails with
    /// AccessDenied saying why and what would allow it, and nothing is written.
    func write(_ change: ItemChange, in id: CollectionID, by client: String, as request: AccessRequest? = nil,
               reply: @escaping @Sendable (Result<ChangedItem, any Error>) -> Void,
               then: @escaping @Sendable (ChangedItem, Application?) -> Void) {
        guard let request, let target = change.target else { return submit(change, in: id, by: client, reply: reply, then: then) }
        let reference = ItemReference(collection: id, item: target)
        gate.authorize(request, of: [reference], by: client) { [self] verdict in
            switch verdict.verdicts[0] {
            case .allowed: submit(change, in: id, by: client, reply: reply, then: then)
            case .refused(let why): reply(.failure(AccessGate.refusal(request, of: reference, to: verdict.application, because: why)))
            case .locked: reply(.failure(CofferError.locked(id.rawValue)))
            case .missing: reply(.failure(CofferError.itemNotFound))
            }
        }
    }

    /// Hands `change` to the collection's writer once `client` is identified (its application
    /// goes to `then`, which runs after the reply, for the audit log and signals).
    private func submit(_ change: ItemChange, in id: CollectionID, by client: String,
                        reply: @escaping @Sendable (Result<ChangedItem, any Error>) -> Void,
                        then: @escaping @Sendable (ChangedItem, Application?) -> Void) {
        gate.application(of: client) { [self] identified in
            let application = identified?.application
            autoLock.used(id)
            let writer = writer(of: id)
            let followUp = connection.reserveFollowUp()
            writer.submit(change) { outcome in
                // Queued before the reply leaves: the client's next call, which may come as
                // soon as it has the reply, then finds it waiting, and is logged after it.
                if case .success(let changed) = outcome { followUp.post { then(changed, application) } }
                reply(outcome.mapError { $0 })
            }
        }
    }

    /// `id`'s writer (made on first use).
    private func writer(of id: CollectionID) -> CollectionWriter {
        if let writer = writers[id] { return writer }
        let writer = CollectionWriter(keychain: keychain, collection: id)
        writers[id] = writer
        return writer
    }

    /// Runs `work` off the loop on `id`'s writer, after the item changes queued before it are
    /// durable: what changes the collection file itself (its label, its deletion) never makes
    /// the loop wait for the disk. `work` then posts its outcome to the loop.
    func perform(in id: CollectionID, _ work: @escaping @Sendable () -> Void) {
        writer(of: id).perform(work)
    }

    /// Forgets the writer of a collection that was deleted (it ends once idle).
    func forgetWriter(of id: CollectionID) {
        writers[id] = nil
    }
}
