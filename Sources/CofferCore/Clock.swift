#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock seconds since the Unix epoch, as the Secret Service's `Created`/`Modified` report.
public enum Clock {
    public static func now() -> UInt64 { UInt64(max(0, time(nil))) }
}
