/// The event loop's follow-ups (`DBusConnection.postFollowUp`): work that waits for the loop's
/// next message or a delay, and what the loop thread queues behind it, so that nothing the
/// loop queues overtakes it. A value the loop keeps under its lock; the loop runs the work.
struct FollowUpQueue {
    /// An entry: a follow-up, or work queued behind one.
    struct Entry {
        let work: @Sendable () -> Void
        /// Posted with `postFollowUp`: what it posts while it runs goes right after it.
        let isFollowUp: Bool
    }

    private var entries: [Entry] = []
    /// What the running follow-up posted so far.
    private var postedByRunning: [Entry] = []
    /// A follow-up is running: what it posts goes right after it, what it emits goes out.
    private(set) var isRunningFollowUp = false
    /// When the waiting entries run at the latest, in monotonic nanoseconds (0: at once).
    private(set) var deadline: UInt64 = 0
    /// How long a follow-up waits for the next message at most, in nanoseconds: long enough
    /// for a client's next call to arrive (a few hundred µs after its reply), short enough to
    /// go unnoticed. While follow-ups are reserved, the loop also looks this often (at least a
    /// millisecond apart). Tests set it longer.
    var delay: UInt64 = 1_000_000

    /// Follow-ups reserved (`FollowUpSlot`) and not yet posted or given up: while any are, the
    /// loop wakes at least every `delay`, so that posting one needs no wake-up of its own.
    var reserved = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Adds a follow-up; true when nothing waited before it (its deadline starts now).
    mutating func add(_ work: @escaping @Sendable () -> Void, now: UInt64) -> Bool {
        entries.append(Entry(work: work, isFollowUp: true))
        guard entries.count == 1 else { return false }
        deadline = now + delay
        return true
    }

    /// Queues work the loop thread posts: right after the running follow-up, or behind the
    /// waiting entries. False when neither applies (it is ordinary posted work then).
    mutating func queuePosted(_ work: @escaping @Sendable () -> Void) -> Bool {
        if isRunningFollowUp {
            postedByRunning.append(Entry(work: work, isFollowUp: false))
        } else if !entries.isEmpty {
            entries.append(Entry(work: work, isFollowUp: false))
        } else {
            return false
        }
        return true
    }

    /// Queues a signal the loop thread emits behind the waiting entries; false when none wait,
    /// or when a follow-up runs (all before it have run: the signal goes out at once).
    mutating func queueSignal(_ send: @escaping @Sendable () -> Void) -> Bool {
        guard !isRunningFollowUp, !entries.isEmpty else { return false }
        entries.append(Entry(work: send, isFollowUp: false))
        return true
    }

    /// Whether the entries are to run: a message was dispatched while they waited, or the
    /// deadline is past.
    func isDue(followed: Bool, now: @autoclosure () -> UInt64) -> Bool {
        !entries.isEmpty && (followed || now() >= deadline)
    }

    /// How long the loop may wait in `poll` for the follow-ups' sake, in milliseconds (nil: no
    /// limit): until the waiting entries' deadline; while follow-ups are reserved, which may be
    /// posted without a wake-up, at most the delay and no less than a millisecond. While a
    /// flush hangs, that is a thousand wake-ups a second: the price of not waking the loop at
    /// every write's reply.
    func pollLimit(now: UInt64) -> Int32? {
        var limit: Int32?
        if !entries.isEmpty {
            limit = deadline > now ? Int32(clamping: (deadline - now + 999_999) / 1_000_000) : 0
        }
        if reserved > 0 {
            let cap = Int32(clamping: max(1, (delay + 999_999) / 1_000_000))
            limit = min(limit ?? cap, cap)
        }
        return limit
    }

    /// The next entry, marked running.
    mutating func next() -> Entry? {
        guard !entries.isEmpty else { return nil }
        let entry = entries.removeFirst()
        isRunningFollowUp = entry.isFollowUp
        return entry
    }

    /// After an entry ran: what it posted goes first; returns how many that was.
    mutating func finished() -> Int {
        entries.insert(contentsOf: postedByRunning, at: 0)
        defer { postedByRunning = [] }
        isRunningFollowUp = false
        return postedByRunning.count
    }

    /// What is left is due at once (a run stopped at its budget).
    mutating func dueAtOnce() {
        if !entries.isEmpty { deadline = 0 }
    }

    /// Empties the queue, returning the work in order.
    mutating func takeAll() -> [@Sendable () -> Void] {
        defer { entries = [] }
        return entries.map(\.work)
    }
}
