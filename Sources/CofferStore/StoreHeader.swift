import CofferCore
import CofferCrypto

/// The fixed start of a collection file. Everything in it is in the clear, and all of it is
/// authenticated: the data key is sealed under the password-derived key with the header bytes
/// before it as associated data, so a wrong password or a changed byte fails the same check.
///
/// ```
/// "COFFER\0\u{1}"  magic (8)
/// u16 format version (1)
/// 16  collection uuid (binds every record to this collection)
/// u64 created (seconds)
/// u8  KDF (1 = Argon2id), u32 t, u32 m (KiB), u32 p
/// u32+bytes salt (32)
/// u32+bytes lookup key (32): keys the attribute hashes that let a locked collection be searched
/// 12  nonce, u32+bytes sealed data key (32 + 16 tag)
/// u32 CRC-32 of all of the above (to tell a torn or damaged header from a wrong password)
/// ```
package struct StoreHeader {
    static let magic: [UInt8] = Array("COFFER".utf8) + [0, 1]
    static let formatVersion: UInt16 = 1
    static let argon2id: UInt8 = 1

    package var uuid: [UInt8]
    var created: UInt64
    package var kdf: Argon2Parameters
    var salt: [UInt8]
    var lookupKey: [UInt8]
    var nonce: [UInt8]
    var sealedDataKey: [UInt8]

    /// A new header sealing `dataKey` under `password`.
    static func create(uuid: [UInt8], created: UInt64, lookupKey: [UInt8], dataKey: SecureBytes,
                       password: SecureBytes, kdf: Argon2Parameters) throws(CofferError) -> StoreHeader {
        var header = StoreHeader(uuid: uuid, created: created, kdf: kdf, salt: Random.bytes(32),
                                 lookupKey: lookupKey, nonce: Random.nonce(AESGCM.nonceLength), sealedDataKey: [])
        let keyEncryptionKey = try header.deriveKey(password: password)
        header.sealedDataKey = try CofferError.catching { try AESGCM.seal(dataKey, key: keyEncryptionKey, nonce: header.nonce, aad: header.associatedData) }
        return header
    }

    /// The data key, or `authenticationFailed` if `password` is wrong.
    package func openDataKey(password: SecureBytes) throws(CofferError) -> SecureBytes {
        let keyEncryptionKey = try deriveKey(password: password)
        do {
            return try AESGCM.open(sealedDataKey[...], key: keyEncryptionKey, nonce: nonce, aad: associatedData)
        } catch CryptoError.authenticationFailed {
            throw .authenticationFailed
        } catch {
            throw .io("decryption failed: \(error)")
        }
    }

    /// Argon2id over the password behind a fixed leading byte, so that an empty password
    /// (which libgcrypt's Argon2 refuses, and which gnome-keyring users rely on) works too.
    private func deriveKey(password: SecureBytes) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let input = try SecureBytes(capacity: password.count + 1)
            try input.append(UInt8(0x01))
            try input.append(password)
            return try KDF.argon2id(password: input, salt: salt, parameters: kdf, outputLength: AESGCM.keyLength)
        }
    }

    /// Everything before the nonce.
    private var associatedData: [UInt8] {
        var w = ByteWriter(capacity: 160)
        w.raw(Self.magic)
        w.u16(Self.formatVersion)
        w.raw(uuid)
        w.u64(created)
        w.u8(Self.argon2id)
        w.u32(kdf.iterations)
        w.u32(kdf.memoryKiB)
        w.u32(kdf.parallelism)
        w.field(salt)
        w.field(lookupKey)
        return w.bytes
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.raw(associatedData)
        w.raw(nonce)
        w.field(sealedDataKey)
        w.u32(Digest.crc32(w.bytes[...]))
        return w.bytes
    }

    /// Parses a header at the start of `bytes`; returns it and its length.
    package static func decode(_ bytes: [UInt8], file: String) throws(CofferError) -> (StoreHeader, Int) {
        func corrupt(_ why: String) -> CofferError { .storeCorrupt(file: file, reason: why) }
        var r = ByteReader(bytes)
        do {
            guard Array(try r.raw(magic.count)) == magic else { throw corrupt("not a Coffer store (bad magic)") }
            let version = try r.u16()
            guard version == formatVersion else { throw corrupt("unsupported format version \(version)") }
            let uuid = Array(try r.raw(16))
            let created = try r.u64()
            guard try r.u8() == argon2id else { throw corrupt("unknown key derivation function") }
            let kdf = Argon2Parameters(iterations: try r.u32(), memoryKiB: try r.u32(), parallelism: try r.u32())
            let salt = Array(bytes[try r.fieldRange()])
            let lookupKey = Array(bytes[try r.fieldRange()])
            let nonce = Array(try r.raw(AESGCM.nonceLength))
            let sealed = Array(bytes[try r.fieldRange()])
            let checksummed = r.offset
            let crc = try r.u32()
            guard crc == Digest.crc32(bytes[0..<checksummed]) else { throw corrupt("header checksum mismatch") }
            guard salt.count >= 16, lookupKey.count == 32, sealed.count == AESGCM.keyLength + AESGCM.tagLength else {
                throw corrupt("header fields have wrong sizes")
            }
            guard kdf.isAcceptableFromFile else {
                throw corrupt("key derivation parameters out of range (t=\(kdf.iterations), m=\(kdf.memoryKiB) KiB, p=\(kdf.parallelism))")
            }
            let header = StoreHeader(uuid: uuid, created: created, kdf: kdf, salt: salt, lookupKey: lookupKey,
                                     nonce: nonce, sealedDataKey: sealed)
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
