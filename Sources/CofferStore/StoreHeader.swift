import CofferCore
import CofferCrypto

/// The fixed start of a collection file. Everything in it is in the clear, and all of it is
/// authenticated.
///
/// ```
/// "COFFER\0\u{1}"  magic (8)
/// u16 format version (2; 1 in files from before key slots)
/// 16  collection uuid (binds every record to this collection)
/// u64 created (seconds)
/// version 2:
///   u32+bytes lookup key (32): keys the attribute hashes that let a locked collection be searched
///   u32+bytes key check (32): HMAC-SHA256 of the uuid under a key derived from the data key
/// version 1:
///   u8  KDF (1 = Argon2id), u32 t, u32 m (KiB), u32 p
///   u32+bytes salt (32)
///   u32+bytes lookup key (32)
///   12  nonce, u32+bytes sealed data key (32 + 16 tag), sealed under the password-derived key
///       with the header bytes before the nonce as associated data
/// u32 CRC-32 of all of the above (to tell a torn or damaged header from a wrong password)
/// ```
/// In version 2 the ways into the collection are its key slots (`KeySlotsFile`), and the key
/// check tells the data key they open is this collection's. A version 1 file keeps working
/// with its password until a slot is added or the password changed, which moves its key into
/// a slots file and rewrites the file in version 2 once.
package struct StoreHeader {
    static let magic: [UInt8] = Array("COFFER".utf8) + [0, 1]
    static let argon2id: UInt8 = 1

    /// How the header holds the way to the data key.
    package enum Keys {
        /// Version 1: the password's slot is in the header.
        case password(kdf: Argon2Parameters, salt: [UInt8], nonce: [UInt8], sealedDataKey: [UInt8])
        /// Version 2: the slots are in the keys file; the header checks the key they open.
        case slots(keyCheck: [UInt8])
    }

    package var uuid: [UInt8]
    var created: UInt64
    var lookupKey: [UInt8]
    package var keys: Keys

    package var formatVersion: UInt16 {
        if case .password = keys { 1 } else { 2 }
    }

    /// A version 2 header for the collection whose data key is `dataKey`.
    static func create(uuid: [UInt8], created: UInt64, lookupKey: [UInt8], dataKey: SecureBytes) throws(CofferError) -> StoreHeader {
        StoreHeader(uuid: uuid, created: created, lookupKey: lookupKey, keys: .slots(keyCheck: try keyCheck(dataKey, uuid: uuid)))
    }

    /// This header in version 2, for its own data key.
    func withKeysInSlots(dataKey: SecureBytes) throws(CofferError) -> StoreHeader {
        try Self.create(uuid: uuid, created: created, lookupKey: lookupKey, dataKey: dataKey)
    }

    private static func keyCheck(_ dataKey: SecureBytes, uuid: [UInt8]) throws(CofferError) -> [UInt8] {
        try CofferError.catching {
            let key = try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer data key check".utf8), outputLength: 32)
            return try HMAC(key: key).authenticationCode(for: uuid)
        }
    }

    /// Throws `storeCorrupt` naming `file` unless `dataKey` is this collection's (version 2;
    /// a version 1 header opened the key itself).
    func check(dataKey: SecureBytes, file: String) throws(CofferError) {
        guard case .slots(let expected) = keys else { return }
        let actual = try Self.keyCheck(dataKey, uuid: uuid)
        guard zip(expected, actual).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            throw .storeCorrupt(file: file, reason: "its key slots open a key that is not this collection's")
        }
    }

    /// The data key through a version 1 header's password slot: `authenticationFailed` if
    /// `password` is wrong, or the header is version 2.
    package func openDataKey(password: SecureBytes) throws(CofferError) -> SecureBytes {
        guard case .password(let kdf, let salt, let nonce, let sealedDataKey) = keys else { throw .authenticationFailed }
        let keyEncryptionKey = try KeySlot.passwordKey(password, salt: salt, kdf: kdf)
        return try CofferError.catching { try AESGCM.open(sealedDataKey[...], key: keyEncryptionKey, nonce: nonce, aad: associatedData) }
    }

    /// Everything before the nonce (version 1) or the CRC (version 2).
    private var associatedData: [UInt8] {
        var w = ByteWriter(capacity: 160)
        w.raw(Self.magic)
        w.u16(formatVersion)
        w.raw(uuid)
        w.u64(created)
        switch keys {
        case .password(let kdf, let salt, _, _):
            w.u8(Self.argon2id)
            w.u32(kdf.iterations)
            w.u32(kdf.memoryKiB)
            w.u32(kdf.parallelism)
            w.field(salt)
            w.field(lookupKey)
        case .slots(let keyCheck):
            w.field(lookupKey)
            w.field(keyCheck)
        }
        return w.bytes
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.raw(associatedData)
        if case .password(_, _, let nonce, let sealedDataKey) = keys {
            w.raw(nonce)
            w.field(sealedDataKey)
        }
        w.u32(Digest.crc32(w.bytes[...]))
        return w.bytes
    }

    /// Parses a header at the start of `bytes`; returns it and its length.
    package static func decode(_ bytes: [UInt8], file: String) throws(CofferError) -> (StoreHeader, Int) {
        func corrupt(_ why: String) -> CofferError { .storeCorrupt(file: file, reason: why) }
        func checkCRC(_ r: inout ByteReader) throws {
            let checksummed = r.offset
            guard try r.u32() == Digest.crc32(bytes[0..<checksummed]) else { throw corrupt("header checksum mismatch") }
        }
        var r = ByteReader(bytes)
        do {
            guard Array(try r.raw(magic.count)) == magic else { throw corrupt("not a Coffer store (bad magic)") }
            let version = try r.u16()
            guard version == 1 || version == 2 else { throw corrupt("unsupported format version \(version)") }
            let uuid = Array(try r.raw(16))
            let created = try r.u64()
            let header: StoreHeader
            if version == 2 {
                let lookupKey = Array(bytes[try r.fieldRange()])
                let keyCheck = Array(bytes[try r.fieldRange()])
                try checkCRC(&r)
                guard lookupKey.count == 32, keyCheck.count == 32 else { throw corrupt("header fields have wrong sizes") }
                header = StoreHeader(uuid: uuid, created: created, lookupKey: lookupKey, keys: .slots(keyCheck: keyCheck))
            } else {
                guard try r.u8() == argon2id else { throw corrupt("unknown key derivation function") }
                let kdf = Argon2Parameters(iterations: try r.u32(), memoryKiB: try r.u32(), parallelism: try r.u32())
                let salt = Array(bytes[try r.fieldRange()])
                let lookupKey = Array(bytes[try r.fieldRange()])
                let nonce = Array(try r.raw(AESGCM.nonceLength))
                let sealed = Array(bytes[try r.fieldRange()])
                try checkCRC(&r)
                guard salt.count >= 16, lookupKey.count == 32, sealed.count == AESGCM.keyLength + AESGCM.tagLength else {
                    throw corrupt("header fields have wrong sizes")
                }
                guard kdf.isAcceptableFromFile else {
                    throw corrupt("key derivation parameters out of range (t=\(kdf.iterations), m=\(kdf.memoryKiB) KiB, p=\(kdf.parallelism))")
                }
                header = StoreHeader(uuid: uuid, created: created, lookupKey: lookupKey,
                                     keys: .password(kdf: kdf, salt: salt, nonce: nonce, sealedDataKey: sealed))
            }
            return (header, r.offset)
        } catch is ByteReader.Truncated {
            throw corrupt("header is truncated")
        } catch let error as CofferError {
            throw error
        } catch {
            throw corrupt("\(error)")
        }
    }
}
