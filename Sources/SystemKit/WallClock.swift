#if canImport(Glibc)
import Glibc
#endif

/// The system's wall clock.
public enum WallClock {
    /// Whole seconds since the Unix epoch (0 for a clock set before it).
    public static var secondsSince1970: UInt64 { UInt64(max(0, time(nil))) }

    /// Milliseconds since the Unix epoch (0 for a clock set before it).
    public static var millisecondsSince1970: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard now.tv_sec >= 0 else { return 0 }
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
    }
}
