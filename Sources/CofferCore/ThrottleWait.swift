#if canImport(Glibc)
import Glibc
#endif

extension Keychain {
    /// Runs `attempt` (an unlock or a password change); while wrong passwords given before hold
    /// it back (`CofferError.throttled`), waits as long as the store says — telling `announce`
    /// how long, once per wait — and runs it again: the password is checked once the wait is
    /// over. Blocks the calling thread. Gives up with `throttled` when `cancelled` turns true.
    public static func waitingOutThrottle<R>(announce: (UInt64) -> Void = { _ in }, cancelled: () -> Bool = { false },
                                             _ attempt: () throws(CofferError) -> R) throws(CofferError) -> R {
        while true {
            do {
                return try attempt()
            } catch .throttled(let id, let seconds) {
                announce(seconds)
                var left = seconds * 10
                while left > 0 {
                    if cancelled() { throw .throttled(id, seconds: (left + 9) / 10) }
                    usleep(100_000)
                    left -= 1
                }
            }
        }
    }
}
