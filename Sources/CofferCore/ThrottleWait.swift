#if canImport(Glibc)
import Glibc
#endif
import SystemKit

extension Keychain {
    /// Runs `attempt` (an unlock or a password change); while wrong passwords given before hold
    /// it back (`CofferError.throttled`), waits as long as the store says — telling `announce`
    /// how long, once per wait — and runs it again: the password is checked once the wait is
    /// over on `clock`. Blocks the calling thread. Gives up with `throttled` when `cancelled`
    /// turns true.
    public static func waitingOutThrottle<R>(clock: TimeSource = Clock.source, announce: (UInt64) -> Void = { _ in },
                                             cancelled: () -> Bool = { false },
                                             _ attempt: () throws(CofferError) -> R) throws(CofferError) -> R {
        while true {
            do {
                return try attempt()
            } catch .throttled(let id, let seconds) {
                let until = clock.elapsedMilliseconds + seconds * 1000
                announce(seconds)
                while case let now = clock.elapsedMilliseconds, now < until {
                    if cancelled() { throw .throttled(id, seconds: (until - now + 999) / 1000) }
                    usleep(100_000)
                }
            }
        }
    }
}
