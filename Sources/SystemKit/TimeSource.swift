#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Where a program reads the time and sets its timers: the system's clocks (`system`), or a
/// clock that stands still until told to move (`manual(at:)`), for tests that must show what
/// happens after an hour without waiting one, or that nothing happens before it.
///
/// A manual clock's timers fire in `advance(by:)`, on the thread that advances it, in the order
/// of their deadlines; a system clock's on one serial queue. Either way a timer's work should
/// only hand work on (post it to a loop, wake a worker): it holds up every timer after it.
public final class TimeSource: Sendable {
    private struct Timer {
        let deadline: UInt64
        let number: UInt64
        let work: @Sendable () -> Void
    }
    private struct Manual {
        var milliseconds: UInt64
        var timers: [Timer] = []
        var scheduled: UInt64 = 0
    }
    /// A manual clock's time and timers (unused by the system's clocks).
    private let manual: Mutex<Manual>
    private static let timerQueue = DispatchQueue(label: "coffer.timers")
    /// The longest a system clock's timer is set for, in milliseconds (a year).
    private static let longestTimer: UInt64 = 365 * 24 * 3600 * 1000

    /// The system's clocks.
    public static let system = TimeSource(isManual: false, at: 0)

    /// A clock standing at `milliseconds` since 1970 until advanced.
    public static func manual(at milliseconds: UInt64) -> TimeSource {
        TimeSource(isManual: true, at: milliseconds)
    }

    private init(isManual: Bool, at milliseconds: UInt64) {
        self.isManual = isManual
        manual = Mutex(Manual(milliseconds: milliseconds))
    }

    /// Whether this clock moves only when told.
    public let isManual: Bool

    /// Milliseconds since the Unix epoch (0 for a clock set before it).
    public var milliseconds: UInt64 {
        if isManual { return manual.withLock { $0.milliseconds } }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard now.tv_sec >= 0 else { return 0 }
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
    }

    /// Whole seconds since the Unix epoch.
    public var seconds: UInt64 { milliseconds / 1000 }

    /// Milliseconds on a clock that never goes back, whatever the wall clock is set to, and
    /// counts the time the system slept (CLOCK_BOOTTIME); a manual clock's own time.
    public var elapsedMilliseconds: UInt64 {
        if isManual { return manual.withLock { $0.milliseconds } }
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
    }

    /// Runs `work` once `milliseconds` have passed on this clock.
    public func after(milliseconds delay: UInt64, _ work: @escaping @Sendable () -> Void) {
        guard isManual else {
            // At most a year ahead: Dispatch's deadlines are nanoseconds, and no Coffer timer is longer.
            let nanoseconds = Int(min(delay, Self.longestTimer) * 1_000_000)
            Self.timerQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: work)
            return
        }
        manual.withLock { state in
            state.scheduled += 1
            let (deadline, overflow) = state.milliseconds.addingReportingOverflow(delay)
            state.timers.append(Timer(deadline: overflow ? .max : deadline, number: state.scheduled, work: work))
        }
    }

    /// Moves a manual clock `milliseconds` forward and runs, here and in order, every timer
    /// whose deadline it reached (those they set within the step too). Does nothing to the
    /// system's clocks.
    public func advance(by milliseconds: UInt64) {
        guard isManual else { return }
        manual.withLock { state in
            let (sum, overflow) = state.milliseconds.addingReportingOverflow(milliseconds)
            state.milliseconds = overflow ? .max : sum
        }
        while let due = manual.withLock({ state -> Timer? in
            guard let next = state.timers.indices.filter({ state.timers[$0].deadline <= state.milliseconds })
                .min(by: { (state.timers[$0].deadline, state.timers[$0].number) < (state.timers[$1].deadline, state.timers[$1].number) })
            else { return nil }
            return state.timers.remove(at: next)
        }) {
            due.work()
        }
    }
}
