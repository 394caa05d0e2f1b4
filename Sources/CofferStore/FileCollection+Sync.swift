import CofferCore
import CofferCrypto

/// What syncing a collection (`CollectionSync`) reads of it: its identity, its keys, where each
/// item's record lies (which changes when the item does) and its payloads.
extension FileCollection {
    /// The collection's uuid, which its sync folder and device files name.
    package var uuid: [UInt8] { state.withLock { $0.log.header.uuid } }

    /// The sync keys derived from the data key; `locked` while locked.
    package func syncKeys() throws(CofferError) -> SyncKeys {
        try SyncKeys(dataKey: try state.withLock { s throws(CofferError) -> SecureBytes in try key(of: s).bytes })
    }

    /// Where each item's record lies now: an item whose record moved may have changed (or the
    /// file was compacted), one whose record stayed has not.
    package func recordOffsets() throws(CofferError) -> [ItemID: Int] {
        try withFreshState { s throws(CofferError) in s.log.entries.mapValues(\.offset) }
    }

    /// Hands `body` the payload of each of `items` that exists, one at a time, in secure memory.
    package func forEachPayload(of items: [ItemID], _ body: (ItemID, SecureBytes) throws(CofferError) -> Void) throws(CofferError) {
        try withFreshState { s throws(CofferError) in
            let key = try key(of: s)
            for item in items {
                guard let frame = s.log.frame(of: item) else { continue }
                let payload: SecureBytes
                do throws(CofferError) {
                    payload = try frame.open(in: s.log.bytes, key: key, uuid: s.log.header.uuid)
                } catch .authenticationFailed {
                    throw .storeCorrupt(file: s.log.file, reason: "item \(item) failed authentication")
                }
                try body(item, payload)
            }
        }
    }

    /// The key slots that may travel with the collection to other devices: all but those bound
    /// to this machine (a TPM's), authenticated anew under the data key.
    package func travelingKeySlots() throws(CofferError) -> KeySlotsFile {
        let dataKey = try state.withLock { s throws(CofferError) -> SecureBytes in try key(of: s).bytes }
        guard var slots = try KeySlotsFile.read(directory: directory, id: id) else {
            throw .invalidArgument("collection '\(id.rawValue)' has no key slots file yet; change its password or add a key slot first")
        }
        try slots.verify(dataKey: dataKey, file: KeySlotsFile.path(directory, id))
        for slot in slots.slots where slot.kind == .tpm { slots = try slots.removing(slot.id, dataKey: dataKey) }
        return slots
    }
}
