#if canImport(Glibc)
import Glibc
#endif

/// Remembers when the store last looked at a file for changes made by other processes, so
/// that the many reads one request makes (a `GetSecrets` of 100 items) look once rather than
/// once each. Writes always look, under the exclusive lock; reads see other processes'
/// writes within `window`.
struct RecentCheck {
    static let window: UInt64 = 2_000_000   // nanoseconds

    private var last: UInt64 = 0

    /// Whether a check made now may be skipped.
    var isFresh: Bool { last != 0 && Self.now() &- last < Self.window }

    mutating func checked() { last = Self.now() }
    mutating func forget() { last = 0 }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
