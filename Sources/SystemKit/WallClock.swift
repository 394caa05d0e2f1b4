#if canImport(Glibc)
import Glibc
#endif

/// The system's wall clock.
public enum WallClock {
    /// Whole seconds since the Unix epoch (0 for a clock set before it).
    public static var secondsSince1970: UInt64 { UInt64(max(0, time(nil))) }
}
