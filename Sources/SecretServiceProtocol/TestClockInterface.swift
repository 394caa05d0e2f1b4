import DBusKit

/// `org.coffer.TestClock` at `/org/coffer/TestClock`: served only by a debug build of cofferd
/// started with a test clock (`COFFER_TEST_CLOCK`), for Coffer's own tests. Not part of the
/// Secret Service.
public enum TestClockInterface {
    public static let name = "org.coffer.TestClock"
    public static let path: ObjectPath = "/org/coffer/TestClock"

    /// `Advance(t milliseconds) → t now`: moves the clock forward; the reply (the time now, in
    /// milliseconds since 1970) comes once the daemon has done what the time passed asks of it
    /// (idle locks, ended windows, throttle waits begun), after it logged `logLine(at: now)`.
    public static let advance = "Advance"

    public static let description = InterfaceDescription(name, methods: [
        MethodDescription(advance, in: [ArgumentDescription("milliseconds", .uint64)], out: [ArgumentDescription("now", .uint64)]),
    ])

    /// What the daemon logs before answering `Advance`: everything it logged before this line
    /// happened before that time.
    public static func logLine(at now: UInt64) -> String { "the test clock is at \(now) ms" }
}
