import Synchronization
import SystemKit

/// The threads the collection writers run on, at most `limit` at once daemon-wide: a writer
/// with work that finds none free waits its turn, and one that has done a round of work while
/// others wait hands its thread on (round robin), so that clients writing to many collections
/// never make a thread each.
final class WriterThreads: Sendable {
    private struct State {
        var running = 0
        /// Writers waiting for a thread, first come first served.
        var waiting: [@Sendable () -> Void] = []
        /// How to wake each writer that holds a thread with nothing to do.
        var idle: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }

    let limit: Int
    private let state = Mutex(State())

    /// The daemon's writers share these.
    static let shared = WriterThreads(limit: 4)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `work` on a writer thread: a new one while fewer than `limit` run, else the next
    /// one that comes free.
    func run(_ work: @escaping @Sendable () -> Void) {
        let (startThread, wake) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            guard state.running < limit else {
                state.waiting.append(work)
                return (false, Array(state.idle.values))
            }
            state.running += 1
            return (true, [])
        }
        // Writers that hold a thread with nothing to do hand it over.
        for nudge in wake { nudge() }
        if startThread { Threads.start(name: "coffer writer") { [self] in serve(work) } }
    }

    /// `writer` holds a thread with nothing to do: `nudge` wakes it when another writer comes
    /// to wait for a thread. Call before looking at `othersWaiting`, so that no waiter is missed.
    func idle(_ writer: ObjectIdentifier, nudge: @escaping @Sendable () -> Void) {
        state.withLock { $0.idle[writer] = nudge }
    }

    /// `writer` is no longer idle (it works, or let its thread go).
    func busy(_ writer: ObjectIdentifier) {
        state.withLock { $0.idle[writer] = nil }
    }

    /// Whether some writer waits for a thread.
    var othersWaiting: Bool { state.withLock { !$0.waiting.isEmpty } }

    /// How many writer threads run now.
    var running: Int { state.withLock { $0.running } }

    /// Runs `first`, then whatever waits, until nothing does; then the thread ends.
    private func serve(_ first: @escaping @Sendable () -> Void) {
        var next: (@Sendable () -> Void)? = first
        while let work = next {
            work()
            next = state.withLock { state in
                guard !state.waiting.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
        }
    }
}
