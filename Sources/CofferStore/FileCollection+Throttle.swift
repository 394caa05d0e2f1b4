import CofferCore
import CofferCrypto

/// Wrong passwords slow a collection's unlocks down (see `UnlockThrottle`).
extension FileCollection {
    public var secondsBeforeNextUnlock: UInt64 {
        UnlockThrottle(directory: directory, collection: id).secondsLeft(at: Clock.nowInMilliseconds())
    }

    /// The data key `header` seals, opened with the first of `passwords` that is right, under
    /// the throttle: nothing is checked while it says to wait, and all wrong is one failure.
    func openDataKey(_ header: StoreHeader, anyOf passwords: [SecureBytes]) throws(CofferError) -> (DataKey, Int) {
        let throttle = UnlockThrottle(directory: directory, collection: id)
        try throttle.check(at: Clock.nowInMilliseconds())
        for (position, password) in passwords.enumerated() {
            do throws(CofferError) {
                let key = try DataKey(try header.openDataKey(password: password))
                throttle.reset()
                return (key, position)
            } catch .authenticationFailed {
                continue
            }
        }
        _ = try? throttle.recordFailure(at: Clock.nowInMilliseconds())
        throw .authenticationFailed
    }
}
