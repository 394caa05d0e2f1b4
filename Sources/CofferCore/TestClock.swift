import SystemKit

/// A clock Coffer's tests move by hand: `COFFER_TEST_CLOCK=<milliseconds since 1970>` makes a
/// debug build of `cofferd` start a manual clock there (`TimeSource.manual`), which the tests
/// advance over the bus; auto-lock, throttle waits and grant expiry then follow it instead of
/// the system's clock. A release build refuses to start with the variable set: a clock anyone
/// could move would stretch every time limit.
public enum TestClock {
    /// The environment variable the tests set.
    public static let variable = "COFFER_TEST_CLOCK"

    /// The manual clock the environment asks for, or nil (the system's clocks).
    public static func requested(in environment: [String: String]) throws(CofferError) -> TimeSource? {
        guard let value = environment[variable], !value.isEmpty else { return nil }
        #if DEBUG
        guard let milliseconds = UInt64(value) else {
            throw .invalidArgument("\(variable) is \"\(value)\": set it to a time in milliseconds since 1970 (a test clock) or unset it")
        }
        return .manual(at: milliseconds)
        #else
        throw .invalidArgument("""
            \(variable) is set, which asks for a clock that other programs could move, stretching \
            every time limit: only a debug build of Coffer, under its own tests, accepts it. Unset it \
            (`unset \(variable)`) and start again.
            """)
        #endif
    }
}
