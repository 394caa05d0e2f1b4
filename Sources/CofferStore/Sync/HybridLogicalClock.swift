/// A hybrid logical clock reading (Kulkarni et al.): wall-clock milliseconds, and a counter
/// that orders readings within one millisecond and carries causality across devices whose
/// clocks disagree. A reading made after seeing another is always greater than it.
public struct HLCTimestamp: Hashable, Comparable, Sendable {
    public let milliseconds: UInt64
    public let counter: UInt32

    public init(milliseconds: UInt64, counter: UInt32) {
        self.milliseconds = milliseconds
        self.counter = counter
    }

    public static let zero = HLCTimestamp(milliseconds: 0, counter: 0)

    public static func < (a: HLCTimestamp, b: HLCTimestamp) -> Bool {
        (a.milliseconds, a.counter) < (b.milliseconds, b.counter)
    }

    /// The reading after this one at wall time `now`.
    func next(now: UInt64) -> HLCTimestamp {
        if now > milliseconds { return HLCTimestamp(milliseconds: now, counter: 0) }
        return counter == .max ? HLCTimestamp(milliseconds: milliseconds + 1, counter: 0)
            : HLCTimestamp(milliseconds: milliseconds, counter: counter + 1)
    }
}

/// One device's hybrid logical clock: `tick` for a change made here, `observe` for each change
/// merged from elsewhere, so that a change made after seeing another orders after it even when
/// this device's wall clock is behind.
public struct HybridLogicalClock: Sendable {
    public private(set) var last: HLCTimestamp

    public init(last: HLCTimestamp = .zero) { self.last = last }

    /// The timestamp of a change made now (`now`: wall milliseconds).
    public mutating func tick(now: UInt64) -> HLCTimestamp {
        last = last.next(now: now)
        return last
    }

    /// Takes in the timestamp of a change from another device.
    public mutating func observe(_ remote: HLCTimestamp) {
        if remote > last { last = remote }
    }
}
