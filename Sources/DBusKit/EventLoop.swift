internal import CDBus
import Synchronization
internal import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// The single-threaded poll loop driving one libdbus connection.
///
/// libdbus tells us which file descriptors to watch (watch functions) and when to call back
/// (timeout functions, used for pending-call timeouts); a self-pipe wakes `poll` for posted work,
/// `stop()`, and libdbus's wakeup requests. Each iteration: run posted work, dispatch queued
/// messages (bounded, so posted work and I/O stay responsive), run follow-up work once a message
/// was dispatched or its delay is up, poll (for at most the follow-up delay while a follow-up is
/// reserved, `FollowUpSlot`), handle ready watches and expired timeouts.
/// Multi-megabyte messages simply take several read/write iterations.
final class EventLoop: @unchecked Sendable {   // shared state behind Mutexes; the libdbus callbacks run on the loop thread
    struct Shared {
        var posted: [@Sendable () -> Void] = []
        /// Work that follows a reply, waiting for the next message (`postFollowUp`).
        var followUps = FollowUpQueue()
        var stopRequested = false
        /// Calls from other threads the loop has taken on and not yet answered: a stop waits
        /// for them, so that no caller is left waiting on a reply nobody will read.
        var callsAwaited = 0
        var running = false
        var loopThread: pthread_t? = nil

        /// Whether the caller is the thread running the loop.
        var isLoopThread: Bool {
            guard running, let loopThread else { return false }
            return pthread_equal(loopThread, pthread_self()) != 0
        }
    }

    /// How many follow-ups (and what they post) one iteration runs at most, so that calls are
    /// dispatched in between when many come at once.
    private static let followUpsPerIteration = 64

    struct TimeoutEntry {
        var deadline: UInt64   // monotonic milliseconds
    }

    /// Watches and timeouts libdbus registered; touched from libdbus callbacks, which run on
    /// whichever thread is currently driving the connection. Sendable by hand: the handles are
    /// only compared here, and only libdbus dereferences them.
    struct IO: @unchecked Sendable {   // libdbus handles, compared here and dereferenced by libdbus alone
        var watches = Set<OpaquePointer>()
        var timeouts = [OpaquePointer: TimeoutEntry]()
    }

    let shared = Mutex(Shared())
    let io = Mutex(IO())
    /// Self-pipe (non-blocking): the loop polls `wakeFD`, other threads write to `wakeWriteFD`.
    let wakeFD: FileDescriptor
    private let wakeWriteFD: FileDescriptor
    let connection: OpaquePointer

    /// A loop for `connection` (its callbacks are installed by `attach`).
    init(driving connection: OpaquePointer) {
        self.connection = connection
        do {
            (wakeFD, wakeWriteFD) = try FileDescriptor.pipe()
            try wakeFD.setNonBlocking()
            try wakeWriteFD.setNonBlocking()
        } catch {
            preconditionFailure("the event loop's wake-up pipe: \(error)")
        }
    }

    deinit {
        wakeFD.close()
        wakeWriteFD.close()
    }

    /// Installs the watch, timeout, wakeup and dispatch-status callbacks on the connection.
    func attach() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let ok1 = dbus_connection_set_watch_functions(connection, { watch, data in
            EventLoop.from(data).io.withLock { _ = $0.watches.insert(watch!) }
            return 1
        }, { watch, data in
            EventLoop.from(data).io.withLock { _ = $0.watches.remove(watch!) }
        }, { _, data in
            EventLoop.from(data).wakeFromElsewhere()
        }, me, nil)
        let ok2 = dbus_connection_set_timeout_functions(connection, { timeout, data in
            let loop = EventLoop.from(data)
            let deadline = EventLoop.now() + UInt64(max(0, dbus_timeout_get_interval(timeout)))
            loop.io.withLock { $0.timeouts[timeout!] = TimeoutEntry(deadline: deadline) }
            loop.wakeFromElsewhere()
            return 1
        }, { timeout, data in
            EventLoop.from(data).io.withLock { _ = $0.timeouts.removeValue(forKey: timeout!) }
        }, { timeout, data in
            let loop = EventLoop.from(data)
            let deadline = EventLoop.now() + UInt64(max(0, dbus_timeout_get_interval(timeout)))
            loop.io.withLock { $0.timeouts[timeout!] = TimeoutEntry(deadline: deadline) }
            loop.wakeFromElsewhere()
        }, me, nil)
        precondition(ok1 != 0 && ok2 != 0, "libdbus: out of memory")
        dbus_connection_set_wakeup_main_function(connection, { data in EventLoop.from(data).wakeFromElsewhere() }, me, nil)
        dbus_connection_set_dispatch_status_function(connection, { _, _, data in
            EventLoop.from(data).wakeFromElsewhere()
        }, me, nil)
    }

    /// Removes the callbacks again (before the connection is closed and released).
    func detach() {
        dbus_connection_set_dispatch_status_function(connection, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(connection, nil, nil, nil)
        _ = dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        _ = dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Monotonic milliseconds.
    static func now() -> UInt64 { nanoseconds() / 1_000_000 }

    // MARK: Cross-thread entry points

    func wake() {
        wakeUps.add(1, ordering: .relaxed)
        _ = try? wakeWriteFD.write([1])   // a full pipe already means "wake up"
    }

    /// How many times the loop was woken through its pipe (for tests).
    let wakeUps = Atomic(0)

    /// The longest the loop spent on one message, piece of posted work or follow-up, in
    /// nanoseconds (written by the loop thread alone).
    let longestDispatch = Atomic<UInt64>(0)

    /// Runs `work`, noting how long it took in `longestDispatch`.
    private func timed(_ work: () -> Void) {
        let began = EventLoop.nanoseconds()
        work()
        let took = EventLoop.nanoseconds() - began
        if took > longestDispatch.load(ordering: .relaxed) { longestDispatch.store(took, ordering: .relaxed) }
    }

    /// Wakes the loop unless the caller is the loop itself: between two polls the loop reads
    /// watches, dispatch status and posted work afresh, so a wake-up from its own thread would
    /// only cost a write, a read and an extra poll cycle (several per message).
    func wakeFromElsewhere() {
        if !isOnLoopThread { wake() }
    }

    /// Queues `work` for the loop thread; it runs on the next iteration (or when `run` starts).
    /// Posted by the loop thread while follow-ups wait, it waits behind them; posted by a
    /// follow-up, it runs right after that follow-up.
    func post(_ work: @escaping @Sendable () -> Void) {
        let fromLoop = shared.withLock { s -> Bool in
            guard s.isLoopThread else {
                s.posted.append(work)
                return false
            }
            if !s.followUps.queuePosted(work) { s.posted.append(work) }
            return true
        }
        if !fromLoop { wake() }
    }

    /// Queues `work` to run on the loop thread once the loop has dispatched the next message,
    /// or after the follow-up delay if none comes, in the order queued.
    /// `reserved`: posted through a `FollowUpSlot`, whose reservation it takes up.
    func postFollowUp(_ work: @escaping @Sendable () -> Void, reserved: Bool = false) {
        let first = shared.withLock { s in
            if reserved { s.followUps.reserved -= 1 }
            return s.followUps.add(work, now: EventLoop.nanoseconds())
        }
        // The loop learns the deadline; later follow-ups share it. A reserved one's loop
        // already wakes within the delay, and waking it now would have it compete for a CPU
        // with the reply this follow-up comes with.
        if first && !reserved { wakeFromElsewhere() }
    }

    /// Reserves a follow-up to be posted later, from any thread (`FollowUpSlot`).
    func reserveFollowUp() {
        shared.withLock { $0.followUps.reserved += 1 }
        wakeFromElsewhere()   // a loop in poll learns that it must wake within the delay
    }

    /// Gives up a reservation that will not be posted.
    func cancelFollowUpReservation() {
        shared.withLock { $0.followUps.reserved -= 1 }
        wakeFromElsewhere()   // a stopping loop may be waiting for it
    }

    /// Follow-ups reserved and not yet posted or given up.
    var reservedFollowUps: Int { shared.withLock { $0.followUps.reserved } }

    /// How long a follow-up waits for the next message at most (1 ms unless a test sets it).
    var followUpDelay: Duration {
        get { shared.withLock { .nanoseconds($0.followUps.delay) } }
        set { shared.withLock { $0.followUps.delay = UInt64(newValue / .nanoseconds(1)) } }
    }

    /// Queues `work` behind the waiting follow-ups if the caller is the loop thread, not
    /// running a follow-up, and some wait; false otherwise (the caller then does the work itself).
    func queueBehindFollowUps(_ work: @escaping @Sendable () -> Void) -> Bool {
        shared.withLock { s in
            s.isLoopThread && s.followUps.queueSignal(work)
        }
    }

    /// Queues `work` only if a loop is running; returns false otherwise (the caller then does
    /// the work itself). Work queued here is guaranteed to run: `run` drains the queue on exit.
    func postIfRunning(_ work: @escaping @Sendable () -> Void) -> Bool {
        let queued = shared.withLock { s -> Bool in
            guard s.running else { return false }
            s.posted.append(work)
            return true
        }
        if queued { wake() }
        return queued
    }

    /// Queues the start of a call another thread waits for, if a loop is running; the loop then
    /// keeps running, even when asked to stop, until `callAnswered()`. False: no loop runs.
    func postAwaitedCallIfRunning(_ start: @escaping @Sendable () -> Void) -> Bool {
        let queued = shared.withLock { s -> Bool in
            guard s.running else { return false }
            s.posted.append(start)
            s.callsAwaited += 1
            return true
        }
        if queued { wake() }
        return queued
    }

    /// The answer (reply, error or timeout) to a call queued by `postAwaitedCallIfRunning`
    /// has been handed over.
    func callAnswered() {
        shared.withLock { $0.callsAwaited -= 1 }
    }

    /// Asks the loop to return once it has answered the calls other threads wait for.
    func stop() {
        shared.withLock { $0.stopRequested = true }
        wake()
    }

    /// True when a loop is running on a thread other than the caller's.
    var runsOnAnotherThread: Bool {
        shared.withLock { s in
            guard s.running, let t = s.loopThread else { return false }
            return pthread_equal(t, pthread_self()) == 0
        }
    }

    var isOnLoopThread: Bool {
        shared.withLock { $0.isLoopThread }
    }

    // MARK: The loop

    /// Runs until `stop()` is called or the connection is lost. A `stop()` that came before
    /// `run()` makes it return at once.
    func run() {
        let alreadyRunning = shared.withLock { s -> Bool in
            if s.running { return true }
            s.running = true
            s.loopThread = pthread_self()
            return false
        }
        precondition(!alreadyRunning, "DBusConnection.run() called while the loop is already running")
        defer {
            // Left by a lost connection: run while the loop thread still counts as such (so that
            // what it posts runs too, a few rounds deep), then what is left as the loop stops.
            for _ in 0..<4 {
                let leftover = shared.withLock { s -> [@Sendable () -> Void] in
                    defer { s.posted = [] }
                    return s.followUps.takeAll() + s.posted
                }
                if leftover.isEmpty { break }
                for work in leftover { work() }
            }
            let leftover = shared.withLock { s -> [@Sendable () -> Void] in
                s.running = false
                s.loopThread = nil
                s.stopRequested = false
                defer { s.posted = [] }
                return s.followUps.takeAll() + s.posted
            }
            for work in leftover { work() }
        }
        while true {
            let stopping = runPosted()
            if stopping { runFollowUps(followed: true) }
            // Leaving is decided under the same lock that queues awaited calls: none is left
            // behind, nor anything follow-ups posted.
            if stopping, shared.withLock({ s -> Bool in
                // Reserved follow-ups are those of writes under way: the loop stays for them.
                guard s.callsAwaited == 0, s.posted.isEmpty, s.followUps.isEmpty, s.followUps.reserved == 0 else { return false }
                s.running = false
                return true
            }) { return }

            var dispatched = 0, followed = false
            while dispatched < 64, dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
                // A message is next, dispatched while follow-ups wait (if any do).
                followed = followed || shared.withLock { !$0.followUps.isEmpty }
                timed { _ = dbus_connection_dispatch(connection) }
                dispatched += 1
            }
            runFollowUps(followed: followed)
            let moreQueued = dbus_connection_get_dispatch_status(connection) != DBUS_DISPATCH_COMPLETE
            if !moreQueued && dbus_connection_get_is_connected(connection) == 0 { return }
            let morePosted = shared.withLock { !$0.posted.isEmpty || ($0.stopRequested && $0.callsAwaited == 0) }

            pollOnce(immediate: moreQueued || morePosted)
        }
    }

    /// Runs the work posted so far; returns whether a stop was requested. The closures are
    /// released before it returns, so that what they captured (a call's message, with the file
    /// descriptors it carries) is not kept alive while the loop then waits in `poll`.
    private func runPosted() -> Bool {
        let (work, stopping) = shared.withLock { s -> ([@Sendable () -> Void], Bool) in
            let w = s.posted
            s.posted = []
            return (w, s.stopRequested)
        }
        for item in work { timed(item) }
        return stopping
    }

    /// Runs the follow-up queue once a message was dispatched while it waited (`followed`) or
    /// its delay is up: in order, what each follow-up posts right after it, what is queued
    /// behind afterwards, at most `followUpsPerIteration` entries (the rest at the next).
    private func runFollowUps(followed: Bool) {
        var budget = shared.withLock { s in
            s.followUps.isDue(followed: followed, now: EventLoop.nanoseconds()) ? min(s.followUps.count, Self.followUpsPerIteration) : 0
        }
        while budget > 0, let next = shared.withLock({ $0.followUps.next() }) {
            timed(next.work)
            budget -= 1
            let cut = shared.withLock { s -> Bool in
                budget += s.followUps.finished()
                guard budget == 0 else { return false }
                s.followUps.dueAtOnce()   // the rest at the next iteration, after dispatching
                return true
            }
            if cut { return }
        }
    }

    /// Monotonic nanoseconds.
    static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
