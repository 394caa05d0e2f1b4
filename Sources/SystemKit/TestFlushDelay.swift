#if canImport(Glibc)
import Glibc
#endif

/// A slow disk for Coffer's tests: in a debug build, `COFFER_TEST_FLUSH_DELAY_MS=N` makes every
/// flush (`synchronizeData`, `synchronize`) take N ms longer, so that a test can show which
/// calls wait for the disk and which do not. Release builds leave it out.
enum TestFlushDelay {
    /// The environment variable the tests set.
    static let variable = "COFFER_TEST_FLUSH_DELAY_MS"

    #if DEBUG
    /// The delay in microseconds (0: none), read once.
    private static let microseconds: UInt32 = {
        guard let text = getenv(variable).map({ String(cString: $0) }), let ms = UInt32(text), ms <= 10_000 else { return 0 }
        return ms * 1000
    }()
    #endif

    /// Waits the delay, if there is one.
    static func wait() {
        #if DEBUG
        if microseconds > 0 { usleep(microseconds) }
        #endif
    }
}
