import Synchronization
import SystemKit

/// The time as Coffer reads it: wall-clock seconds since the Unix epoch (as the Secret Service's
/// `Created`/`Modified` report), grant expiry, throttle waits and auto-lock timers. The system's
/// clocks, unless a test build of a program installed a manual clock at its start (`TestClock`).
public enum Clock {
    private static let installed = Mutex<TimeSource>(.system)

    /// Where the time is read and timers are set.
    public static var source: TimeSource { installed.withLock { $0 } }

    /// Makes `source` the process's clock (once, at start, before anything reads the time).
    public static func install(_ source: TimeSource) {
        installed.withLock { $0 = source }
    }

    public static func now() -> UInt64 { source.seconds }

    /// Milliseconds since the Unix epoch, for waits that must not round a second away.
    public static func nowInMilliseconds() -> UInt64 { source.milliseconds }
}
