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
    /// A change of an item, or other work on the collection (`perform`), which runs alone,
    /// between the commits of the changes queued before and after it.
    enum Job: Sendable {
        /// `done` is called off the loop with the outcome (once durable).
        case change(ItemChange, done: @Sendable (Result<ChangedItem, CofferError>) -> Void)
        case work(@Sendable () -> Void)

        var change: ItemChange? {
            if case .change(let change, _) = self { change } else { nil }
        }
    }

    /// The jobs queued, and whether the writer's thread runs.
    private struct Queue {
        var jobs: [Job] = []
        var running = false
    }

    private let keychain: Keychain
    let collection: CollectionID
    /// How long the thread waits for a job before it ends (the next job starts another).
    let idleTimeout: Duration
    /// The threads it runs on, shared with the other writers.
    private let threads: WriterThreads
    private let pending = Mutex(Queue())
    /// Signalled once per job queued; the writer thread waits on it.
    private let queued = DispatchSemaphore(value: 0)

    /// A writer whose thread (one of `threads`, waiting on a semaphore: waking a dispatch
    /// queue per write cost more than the write's own work) is taken with the first job and
    /// let go after `idleTimeout` without one, or as soon as another writer waits for a thread.
    init(keychain: Keychain, collection: CollectionID, idleTimeout: Duration = .seconds(5),
         threads: WriterThreads = .shared) {
        self.keychain = keychain
        self.collection = collection
        self.idleTimeout = idleTimeout
        self.threads = threads
    }

    /// Whether the writer has a thread, or waits for one, now.
    var isRunning: Bool { pending.withLock { $0.running } }

    /// Queues `change`; `done` gets its outcome.
    func submit(_ change: ItemChange, done: @escaping @Sendable (Result<ChangedItem, CofferError>) -> Void) {
        enqueue(.change(change, done: done))
    }

    /// Queues `work` (a change of the collection itself: its label, its deletion), to run on the
    /// writer's thread after the changes queued before it are durable and before those after.
    func perform(_ work: @escaping @Sendable () -> Void) {
        enqueue(.work(work))
    }

    private func enqueue(_ job: Job) {
        let start = pending.withLock { queue -> Bool in
            queue.jobs.append(job)
            defer { queue.running = true }
            return !queue.running
        }
        queued.signal()
        if start { threads.run { [self] in run() } }
    }

    /// Commits what comes, until idle for `idleTimeout` (the thread is let go), or until
    /// another writer waits for a thread: after a round of work (this one waits its turn again
    /// if it has more), or while idle (`WriterThreads` wakes it).
    private func run() {
        var idleSince = ContinuousClock.now
        while true {
            var jobs = pending.withLock { queue -> [Job] in
                defer { queue.jobs.removeAll() }
                return queue.jobs
            }
            if jobs.isEmpty {
                threads.idle(ObjectIdentifier(self)) { [queued] in queued.signal() }
                let handOver = threads.othersWaiting
                let idleFor = ContinuousClock.now - idleSince
                if handOver || idleFor >= idleTimeout {
                    threads.busy(ObjectIdentifier(self))
                    return letThreadGo()
                }
                let left = idleTimeout - idleFor
                _ = queued.wait(timeout: .now() + .nanoseconds(Int(left.components.seconds) * 1_000_000_000
                                                               + Int(left.components.attoseconds / 1_000_000_000)))
                threads.busy(ObjectIdentifier(self))
                continue
            }
            // Each batch is the longest run of changes at the front that do not interact; the
            // jobs are taken off the list, so that only the batch holds their changes. Other
            // work runs alone, in its turn.
            while !jobs.isEmpty {
                if case .work(let work) = jobs[0] {
                    jobs.removeFirst()
                    work()
                    continue
                }
                var end = 1
                while end < jobs.count, let next = jobs[end].change,
                      !jobs[..<end].contains(where: { Self.interact($0.change!, next) }) {
                    end += 1
                }
                let batch = Array(jobs[..<end])
                jobs.removeFirst(end)
                commit(consume batch)
            }
            idleSince = ContinuousClock.now
            if threads.othersWaiting { return letThreadGo() }
        }
    }

    /// Ends this turn on the thread; if jobs came meanwhile, the writer waits for its next
    /// turn (a job queued from now on takes one again).
    private func letThreadGo() {
        let more = pending.withLock { queue -> Bool in
            queue.running = !queue.jobs.isEmpty
            return queue.running
        }
        if more { threads.run { [self] in run() } }
    }

    /// Commits `batch` and hands out the outcomes as soon as it is durable (change by change
    /// if the batch fails, so that each gets its own outcome). The secrets the changes carried
    /// are released, and so wiped, before any reply leaves: the jobs let go of them here, and
    /// the collection empties `changes` before it acknowledges them.
    private func commit(_ batch: consuming [Job]) {
        var replies: [@Sendable (Result<ChangedItem, CofferError>) -> Void] = []
        var changes: [ItemChange] = []
        var jobs = consume batch
        for case .change(let change, let done) in jobs {
            changes.append(change)
            replies.append(done)
        }
        jobs = []
        do throws(CofferError) {
            try keychain.commit(&changes, in: collection) { changed in
                for (reply, item) in zip(replies, changed) { reply(.success(item)) }
            }
        } catch {
            guard changes.count > 1 else {
                changes = []
                for reply in replies { reply(.failure(error)) }
                return
            }
            for reply in replies {
                var one = [changes.removeFirst()]
                do throws(CofferError) {
                    try keychain.commit(&one, in: collection) { changed in
                        reply(changed.first.map { .success($0) } ?? .failure(.itemNotFound))
                    }
                } catch {
                    one = []
                    reply(.failure(error))
                }
            }
        }
    }

    /// Whether two changes may not share a commit.
    static func interact(_ a: ItemChange, _ b: ItemChange) -> Bool {
        switch (a, b) {
        case (.insert(let x, let px), .insert(let y, let py)): x.attributes == y.attributes || !px.replaced.isDisjoint(with: py.replaced)
        case (.insert, _), (_, .insert): true   // an insert may replace the item the other touches
        default: a.target == b.target
        }
    }
}

extension DuplicatePolicy {
    /// The items an insert with this policy may overwrite by id.
    var replaced: Set<ItemID> {
        if case .replacing(let ids) = self { Set(ids) } else { [] }
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
