import CofferCore
import CofferCrypto

/// Wrong passwords slow a collection's unlocks down (see `UnlockThrottle`).
extension FileCollection {
    public var secondsBeforeNextUnlock: UInt64 {
        UnlockThrottle(directory: directory, collection: id).secondsLeft(at: clock.milliseconds)
    }

    /// The data key `header` seals, opened with the first of `passwords` that is right, as one
    /// attempt under the throttle (`UnlockThrottle.attempt`): nothing is checked while it says
    /// to wait, attempts at this collection are checked one at a time, and all wrong is one
    /// failure.
    func openDataKey(_ header: StoreHeader, anyOf passwords: [SecureBytes]) throws(CofferError) -> (DataKey, Int) {
        try UnlockThrottle(directory: directory, collection: id).attempt(at: { clock.milliseconds }) { () throws(CofferError) in
            for (position, password) in passwords.enumerated() {
                do throws(CofferError) {
                    return (try DataKey(try header.openDataKey(password: password)), position)
                } catch .authenticationFailed {
                    continue
                }
            }
            return nil
        }
    }
}
