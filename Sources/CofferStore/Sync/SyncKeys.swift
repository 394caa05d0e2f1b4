import CofferCore
import CofferCrypto

/// The keys of a synced collection's folder, derived from its folder key (which every device
/// of the collection has, and none keeps in its store): one for the records of device files,
/// one for the items' contents inside them (which stay sealed in memory until applied to the
/// store), and one for the digests that tell whether an item changed.
package struct SyncKeys: Sendable {
    private let records: SecureBytes
    private let contents: SecureBytes
    /// Keyed with the digests' key; one handle for every digest (the session that holds these
    /// keys is used by one thread at a time).
    private let digests: HMAC

    package init(folderKey dataKey: SecureBytes) throws(CofferError) {
        records = try CofferError.catching {
            try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer sync records".utf8), outputLength: AESGCM.keyLength)
        }
        contents = try CofferError.catching {
            try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer sync contents".utf8), outputLength: AESGCM.keyLength)
        }
        digests = try CofferError.catching {
            try HMAC(key: try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer sync digests".utf8),
                                          outputLength: AESGCM.keyLength))
        }
    }

    /// What tells whether an item changed since it was last exported or applied: a keyed digest
    /// of its payload, which says nothing of the payload without the collection's key.
    func digest(of payload: SecureBytes) -> [UInt8] {
        digests.authenticationCode(for: payload)
    }

    /// `record`, numbered `sequence` in its device's history, sealed with `aad`.
    func seal(_ record: SyncRecord, sequence: UInt64, aad: [UInt8]) throws(CofferError) -> [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.u64(sequence)
        let nonce = Random.nonce(AESGCM.nonceLength)
        return try CofferError.catching { nonce + (try AESGCM.seal(w.bytes + record.encoded(), key: records, nonce: nonce, aad: aad)) }
    }

    /// A sealed record and its number in its device's history.
    func open(_ sealed: ArraySlice<UInt8>, aad: [UInt8]) throws(CofferError) -> (sequence: UInt64, record: SyncRecord) {
        let nonce = Array(sealed.prefix(AESGCM.nonceLength))
        let plain = try CofferError.catching { try AESGCM.open(sealed.dropFirst(AESGCM.nonceLength), key: records, nonce: nonce, aad: aad) }
        let bytes = plain.unprotectedArray(0..<plain.count)
        var r = ByteReader(bytes)
        guard let sequence = try? r.u64() else { throw .invalidArgument("a sync record ends early") }
        return (sequence, try SyncRecord(decoding: Array(bytes[8...])))
    }

    /// An item's content (its payload, in secure memory) sealed for `change`'s item and version.
    package func sealContent(_ payload: SecureBytes, item: SyncItemID, version: ChangeVersion) throws(CofferError) -> [UInt8] {
        let nonce = Random.nonce(AESGCM.nonceLength)
        return try CofferError.catching {
            nonce + (try AESGCM.seal(payload, key: contents, nonce: nonce, aad: Self.contentContext(item, version)))
        }
    }

    /// The payload `sealed` holds, in secure memory.
    package func openContent(_ sealed: [UInt8], item: SyncItemID, version: ChangeVersion) throws(CofferError) -> SecureBytes {
        let nonce = Array(sealed.prefix(AESGCM.nonceLength))
        return try CofferError.catching {
            try AESGCM.open(sealed.dropFirst(AESGCM.nonceLength), key: contents, nonce: nonce, aad: Self.contentContext(item, version))
        }
    }

    private static func contentContext(_ item: SyncItemID, _ version: ChangeVersion) -> [UInt8] {
        var w = ByteWriter(capacity: 48)
        w.raw(item.bytes)
        SyncRecord.encode(version, into: &w)
        return w.bytes
    }
}
