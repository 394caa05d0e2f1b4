import CofferCore
import CofferCrypto
import SystemKit

/// What syncing a collection (`CollectionSync`) reads of it: its identity, its keys, where each
/// item's record lies (which changes when the item does) and its payloads.
extension FileCollection {
    /// The key that seals this collection's sync state (`SyncState`), derived from its data
    /// key; `locked` while locked.
    package func syncStateKey() throws(CofferError) -> SecureBytes {
        let dataKey = try state.withLock { s throws(CofferError) -> SecureBytes in try key(of: s).bytes }
        return try CofferError.catching {
            try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer sync state".utf8), outputLength: AESGCM.keyLength)
        }
    }

    /// Where the collection's file stands: which file, and how far its records go. Any change
    /// to the collection, by this process or another, moves it.
    package func contentMark() throws(CofferError) -> ContentMark {
        try withFreshState { s throws(CofferError) in ContentMark(file: s.identity, end: s.log.validEnd) }
    }

    /// See `contentMark()`.
    package struct ContentMark: Equatable, Sendable {
        let file: FileNode
        let end: Int
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

}
