import CofferCore
import CofferCrypto
import TPMKit

/// The ways into a collection (see `KeySlot`): listed without its key; added, removed or sealed
/// anew only by someone who opens it, and then only its small keys file is rewritten, whatever
/// the collection holds. A file from before key slots moves to them (and to format 2) with its
/// first such change, the one change that rewrites it.
extension FileCollection {
    /// The collection's key slots; a file from before key slots has one, its password's.
    package func keySlots() throws(CofferError) -> [KeySlot] {
        if let slots = try KeySlotsFile.read(directory: directory, id: id) { return slots.slots }
        let header = try withFreshState { s throws(CofferError) in s.log.header }
        guard case .password(let kdf, let salt, let nonce, let sealed) = header.keys else {
            throw .storeCorrupt(file: KeySlotsFile.path(directory, id), reason: "it is missing, and it holds every way into the collection")
        }
        return [KeySlot(id: 1, kind: .password, created: header.created, kdf: kdf, tpm: nil, salt: salt, nonce: nonce, sealedKey: sealed)]
    }

    /// Changes the password: the password's slot is sealed anew, nothing else changes.
    public func changePassword(from old: SecureBytes, to new: SecureBytes) throws(CofferError) {
        try resealPassword(openingWith: .password(old), as: new)
    }

    /// Opens the collection with its recovery key and gives it a new password in place of the
    /// old one (its slot is replaced; the recovery key and other slots stay).
    package func recover(with recoveryKey: RecoveryKey, newPassword: SecureBytes) throws(CofferError) {
        try resealPassword(openingWith: .recoveryKey(recoveryKey), as: newPassword)
    }

    /// Unlocks with a recovery key.
    package func unlock(recoveryKey: RecoveryKey) throws(CofferError) {
        _ = try unlock(anyOf: [.recoveryKey(recoveryKey)])
    }

    /// Unlocks with this machine's TPM (and the slot's PIN, if it has one).
    package func unlock(tpm device: TPMDevice, pin: SecureBytes?) throws(CofferError) {
        _ = try unlock(anyOf: [.tpm(device, pin: pin, pcrs: .none)])
    }

    /// Adds a slot for a new recovery key, opening the collection with `password`; returns the
    /// key (to be shown once: nothing keeps it) and its slot.
    package func addRecoveryKey(password: SecureBytes) throws(CofferError) -> (RecoveryKey, KeySlot) {
        let recoveryKey = try RecoveryKey.generate()
        return (recoveryKey, try addSlot(.recoveryKey(recoveryKey), password: password))
    }

    /// Adds a slot that `device` seals, bound to `pcrs` and to `pin` when given, opening the
    /// collection with `password`.
    package func addTPMSlot(_ device: TPMDevice, pin: SecureBytes?, pcrs: PCRSelection, password: SecureBytes) throws(CofferError) -> KeySlot {
        if let pin, pin.count < Self.minimumPINLength {
            throw .invalidArgument("a TPM PIN has at least \(Self.minimumPINLength) characters; nothing was changed")
        }
        return try addSlot(.tpm(device, pin: pin, pcrs: pcrs), password: password)
    }

    /// The shortest TPM PIN accepted: the PIN is what stands between a program running as the
    /// user and the slot wherever the TPM's lockout can be reset.
    package static let minimumPINLength = 6

    private func addSlot(_ opener: KeySlot.Opener, password: SecureBytes) throws(CofferError) -> KeySlot {
        let slots = try changeSlots(openingWith: .password(password)) { slots, key throws(CofferError) in
            try slots.adding(opener, dataKey: key, kdf: kdf)
        }
        guard let slot = slots.slots.last else { throw .io("the new key slot was not written") }
        return slot
    }

    /// Removes slot `slotID`, opening the collection with `password`. The password's own slot
    /// cannot be removed, so a collection always keeps a way in.
    package func removeKeySlot(_ slotID: UInt32, password: SecureBytes) throws(CofferError) {
        _ = try changeSlots(openingWith: .password(password)) { slots, key throws(CofferError) in
            try slots.removing(slotID, dataKey: key)
        }
    }

    private func resealPassword(openingWith opener: KeySlot.Opener, as new: SecureBytes) throws(CofferError) {
        _ = try changeSlots(openingWith: opener) { slots, key throws(CofferError) in
            try slots.replacingPassword(with: new, dataKey: key, kdf: kdf)
        }
        state.withLock { $0.keptKey = nil }   // a new password: the next unlock needs it
    }

    /// Opens the data key with `opener` (under the throttle), then, holding the write lock,
    /// applies `change` to the slots as they are now and writes the result in one step. A file
    /// from before key slots gets its keys file first (its password's slot, sealed anew), and
    /// is then rewritten in format 2, so that its header opens nothing any more.
    private func changeSlots(openingWith opener: KeySlot.Opener,
                             _ change: (KeySlotsFile, SecureBytes) throws(CofferError) -> KeySlotsFile) throws(CofferError) -> KeySlotsFile {
        let header = try withFreshState { s throws(CofferError) in s.log.header }
        let (key, _, opened) = try openDataKey(header, anyOf: [opener])   // slow: outside the locks
        return try withWriteLock { s throws(CofferError) in
            guard s.log.header.uuid == header.uuid else { throw .collectionNotFound(id.rawValue) }
            // The slot that opened the key must still be there as it was: a slot another process
            // removed or sealed anew in the meantime (an old password, a revoked recovery key)
            // changes nothing.
            let current = try KeySlotsFile.read(directory: directory, id: id)
            guard current?.encoded() == opened?.encoded() else {
                throw .io("the key slots of collection '\(id.rawValue)' were changed by another program meanwhile; nothing was changed, try again")
            }
            let slots = if let current { current } else {
                try KeySlotsFile.first(uuid: header.uuid, dataKey: key.bytes, opener: opener, kdf: kdf)
            }
            let changed = try change(slots, key.bytes)
            try changed.write(directory: directory, id: id)
            if s.log.header.formatVersion == 1 {
                // The keys file now holds every way in (the header's password opens nothing once
                // it exists), so the change is made; rewriting the file in format 2 is finished
                // by the next unlock if it cannot be now (a full disk).
                do throws(CofferError) {
                    try compact(&s, header: try s.log.header.withKeysInSlots(dataKey: key.bytes), key: key)
                } catch {
                    warn("cannot finish moving \(path) to key slots yet (the next unlock will): \(error)")
                }
            }
            return changed
        }
    }

    /// Rewrites a file from before key slots in format 2, once its keys file exists.
    func moveKeysToSlots(key: DataKey) throws(CofferError) {
        try withWriteLock { s throws(CofferError) in
            guard s.log.header.formatVersion == 1 else { return }
            try compact(&s, header: try s.log.header.withKeysInSlots(dataKey: key.bytes), key: key)
        }
    }
}
