import SystemKit

/// Wall-clock seconds since the Unix epoch, as the Secret Service's `Created`/`Modified` report.
public enum Clock {
    public static func now() -> UInt64 { WallClock.secondsSince1970 }

    /// Milliseconds since the Unix epoch, for waits that must not round a second away.
    public static func nowInMilliseconds() -> UInt64 { WallClock.millisecondsSince1970 }
}
