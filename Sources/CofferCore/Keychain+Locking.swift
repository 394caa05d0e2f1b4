import CofferCrypto

/// Locking, unlocking and changing the password of a collection.
extension Keychain {
    public func lock(_ id: CollectionID) throws(CofferError) {
        try collection(id).lock()
    }

    /// Locks `id` keeping its key aside for `unlockWithKeptKey` (see `CollectionBackend`).
    public func lock(_ id: CollectionID, keepingKey: Bool) throws(CofferError) {
        try collection(id).lock(keepingKey: keepingKey)
    }

    public func hasKeptKey(_ id: CollectionID) -> Bool {
        (try? collection(id).hasKeptKey) ?? false
    }

    /// Unlocks `id` with the key kept when it locked; false when none is kept.
    public func unlockWithKeptKey(_ id: CollectionID) throws(CofferError) -> Bool {
        try collection(id).unlockWithKeptKey()
    }

    public func forgetKeptKey(_ id: CollectionID) {
        try? collection(id).forgetKeptKey()
    }

    public func unlock(_ id: CollectionID, password: SecureBytes) throws(CofferError) {
        try collection(id).unlock(password: password)
    }

    /// How long the next password for `id` waits before it is checked, after wrong ones.
    public func secondsBeforeNextUnlock(_ id: CollectionID) -> UInt64 {
        (try? collection(id).secondsBeforeNextUnlock) ?? 0
    }

    /// Unlocks with the first of `passwords` that is right; returns its position.
    public func unlock(_ id: CollectionID, anyOf passwords: [SecureBytes]) throws(CofferError) -> Int {
        try collection(id).unlock(anyOf: passwords)
    }

    public func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws(CofferError) {
        try collection(id).changePassword(from: old, to: new)
    }
}
