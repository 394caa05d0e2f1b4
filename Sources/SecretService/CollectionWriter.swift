import CofferCore
import Dispatch
import Synchronization
import SystemKit

/// The durable writes of one collection, done off the D-Bus loop: changes that arrive while a
/// commit runs wait and then go together in the next one, so that concurrent clients share its
/// disk flushes instead of queueing behind each other's. Each change's outcome is handed back
/// only once its commit is durable. Changes are committed in the order they came.
///
/// A batch holds only changes that cannot interact (no two inserts with the same attributes,
/// no item touched twice), since a commit decides each against the collection as it was before
/// it; a batch that fails is committed again change by change, so that each gets its own outcome.
final class CollectionWriter: Sendable {
    struct Job: Sendable {
        let change: ItemChange
        /// Called off the loop with the outcome (once durable).
        let done: @Sendable (Result<ChangedItem, CofferError>) -> Void
    }

    private let keychain: Keychain
    let collection: CollectionID
    private let pending = Mutex([Job]())
    /// Signalled once per job queued; the writer thread waits on it.
    private let queued = DispatchSemaphore(value: 0)

    /// Starts the writer's thread (a thread of its own, waiting on a semaphore: waking a
    /// dispatch queue per write cost more than the write's own work).
    init(keychain: Keychain, collection: CollectionID) {
        self.keychain = keychain
        self.collection = collection
        Threads.start(name: "writer \(collection.rawValue)") { [self] in run() }
    }

    /// Queues `change`; `done` gets its outcome.
    func submit(_ change: ItemChange, done: @escaping @Sendable (Result<ChangedItem, CofferError>) -> Void) {
        pending.withLock { $0.append(Job(change: change, done: done)) }
        queued.signal()
    }

    private func run() -> Never {
        while true {
            queued.wait()
            let jobs = pending.withLock { jobs -> [Job] in
                defer { jobs.removeAll() }
                return jobs
            }
            guard !jobs.isEmpty else { continue }   // taken by an earlier round
            var batch: [Job] = []
            for job in jobs {
                if batch.contains(where: { Self.interact($0.change, job.change) }) {
                    commit(batch)
                    batch = []
                }
                batch.append(job)
            }
            commit(batch)
        }
    }

    private func commit(_ batch: [Job]) {
        guard !batch.isEmpty else { return }
        do {
            let changed = try keychain.commit(batch.map(\.change), in: collection)
            for (job, item) in zip(batch, changed) { job.done(.success(item)) }
        } catch {
            guard batch.count > 1 else { return batch[0].done(.failure(error)) }
            for job in batch { commit([job]) }
        }
    }

    /// Whether two changes may not share a commit.
    static func interact(_ a: ItemChange, _ b: ItemChange) -> Bool {
        switch (a, b) {
        case (.insert(let x, _), .insert(let y, _)): x.attributes == y.attributes
        case (.insert, _), (_, .insert): true   // an insert may replace the item the other touches
        default: a.target == b.target
        }
    }
}

extension ItemChange {
    /// The existing item an update or a removal touches.
    var target: ItemID? {
        switch self {
        case .insert: nil
        case .update(let id, _), .remove(let id): id
        }
    }
}
