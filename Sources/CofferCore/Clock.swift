import SystemKit

/// Wall-clock seconds since the Unix epoch, as the Secret Service's `Created`/`Modified` report.
public enum Clock {
    public static func now() -> UInt64 { WallClock.secondsSince1970 }
}
