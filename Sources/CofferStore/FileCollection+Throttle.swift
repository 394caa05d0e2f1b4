import CofferCore
import CofferCrypto

/// Wrong passwords slow a collection's unlocks down (see `UnlockThrottle`).
extension FileCollection {
    public var secondsBeforeNextUnlock: UInt64 {
        UnlockThrottle(directory: directory, collection: id).secondsLeft(at: clock.milliseconds)
    }

    /// The data key, opened with the first of `openers` that opens one of the collection's key
    /// slots (those of its keys file, or the password of a header from before key slots), as
    /// one attempt under the throttle (`UnlockThrottle.attempt`): nothing is checked while it
    /// says to wait, attempts at this collection are checked one at a time, and all wrong is one
    /// failure, whatever kind of guess each was. Returns the key, the position of the opener
    /// that opened it, and the slots file it came from (checked against the key and `header`).
    func openDataKey(_ header: StoreHeader, anyOf openers: [KeySlot.Opener]) throws(CofferError) -> (DataKey, Int, KeySlotsFile?) {
        let slots = try KeySlotsFile.read(directory: directory, id: id)
        let file = KeySlotsFile.path(directory, id)
        if slots == nil, header.formatVersion >= 2 {
            throw .storeCorrupt(file: file, reason: "it is missing, and it holds every way into the collection; restore \(id.rawValue)\(KeySlotsFile.fileExtension) together with \(id.rawValue).coffer from the same backup")
        }
        if let slots, slots.uuid != header.uuid { throw .storeCorrupt(file: file, reason: "it belongs to another collection") }
        // Offering a kind of key the collection has no slot for is not a guess: say so, count nothing.
        let kinds = Set(slots?.slots.map(\.kind) ?? [.password])
        guard openers.contains(where: { kinds.contains($0.kind) }) else {
            throw .invalidArgument("collection '\(id.rawValue)' has no \(openers.first?.kind.described ?? "such") slot; 'coffer slots' lists its ways in")
        }
        let (key, position) = try UnlockThrottle(directory: directory, collection: id).attempt(at: { clock.milliseconds }) { () throws(CofferError) in
            for (position, opener) in openers.enumerated() {
                do throws(CofferError) {
                    if let slots { return (try slots.open(with: opener, file: file).0, position) }
                    guard case .password(let password) = opener else { continue }
                    return (try header.openDataKey(password: password), position)
                } catch .authenticationFailed {
                    continue
                }
            }
            return nil
        }
        if let slots {
            try slots.verify(dataKey: key, file: file)
            try header.check(dataKey: key, file: path)
        }
        return (try DataKey(key), position, slots)
    }
}
