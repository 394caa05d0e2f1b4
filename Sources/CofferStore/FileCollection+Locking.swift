import CofferCore
import CofferCrypto

/// Locking and unlocking a collection: its key, kept, set aside or wiped.
extension FileCollection {
    public func lock() {
        lock(keepingKey: false)
    }

    /// Locks; with `keepingKey`, the key is kept aside for `unlockWithKeptKey` (without, a key
    /// kept before is wiped too).
    public func lock(keepingKey: Bool) {
        state.withLock { s in
            s.keptKey = keepingKey ? (s.dataKey ?? s.keptKey) : nil
            s.dataKey = nil
            s.metadataCache = [:]
        }
    }

    public var hasKeptKey: Bool { state.withLock { $0.keptKey != nil } }

    /// Unlocks with the key `lock(keepingKey: true)` kept, checked against the file as a
    /// password's would be; false when none is kept. The kept key is gone either way.
    public func unlockWithKeptKey() throws(CofferError) -> Bool {
        try withFreshState { s throws(CofferError) in
            guard let key = s.keptKey else { return false }
            s.keptKey = nil
            try s.log.verify(with: key, items: false)
            s.dataKey = key
            return true
        }
    }

    public func forgetKeptKey() {
        state.withLock { $0.keptKey = nil }
    }

    public func unlock(password: SecureBytes) throws(CofferError) {
        _ = try unlock(anyOf: [password])
    }

    /// Unlocks with the first of `passwords` that opens the collection and returns its position;
    /// wrong ones count as one wrong password for the throttle (see `UnlockThrottle`), and none
    /// is checked while the throttle says to wait.
    public func unlock(anyOf passwords: [SecureBytes]) throws(CofferError) -> Int {
        try unlock(anyOf: passwords.map { .password($0) })
    }

    /// Unlocks with the first of `openers` that opens a key slot (see `unlock(anyOf:)` above).
    func unlock(anyOf openers: [KeySlot.Opener]) throws(CofferError) -> Int {
        let header = try withFreshState { s throws(CofferError) in s.log.header }
        let (key, position, slots) = try openDataKey(header, anyOf: openers)   // slow: outside the state lock
        try state.withLock { s throws(CofferError) in
            guard s.log.header.uuid == header.uuid else { throw .authenticationFailed }
            try s.log.verify(with: key, items: false)
            s.dataKey = key
        }
        keepAuditKey(key, uuid: header.uuid)
        if slots != nil, header.formatVersion == 1 {
            // A move to key slots was cut short after the slots were written: finish it, so
            // that the header's password (maybe one since replaced) opens nothing any more.
            do throws(CofferError) { try moveKeysToSlots(key: key) } catch { warn("cannot finish moving \(path) to key slots: \(error)") }
        }
        return position
    }
}
