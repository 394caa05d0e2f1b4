import CGcrypt
import Synchronization

/// An AES-256-GCM key with its cipher handle kept open (in secure memory), so that sealing or
/// opening many small records costs no handle allocation or key schedule each time. Calls are
/// serialized by a lock; use one key object per thread for parallel work.
public final class AESGCMKey: Sendable {
    private let handle: CipherHandle
    private let lock = Mutex(())

    public init(_ key: SecureBytes) throws {
        guard key.count == AESGCM.keyLength else {
            throw CryptoError.invalidInput("AES-256-GCM key must be \(AESGCM.keyLength) bytes, got \(key.count)")
        }
        handle = try CipherHandle(algorithm: COFFER_GCRY_CIPHER_AES256, mode: COFFER_GCRY_CIPHER_MODE_GCM, key: key)
    }

    public func seal(_ plaintext: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, nonce: nonce, aad: aad) }
    }

    public func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, nonce: nonce, aad: aad) }
    }

    /// Throws `.authenticationFailed` on a tag mismatch; the plaintext is never returned then.
    public func open(_ sealed: ArraySlice<UInt8>, nonce: [UInt8], aad: [UInt8]) throws -> SecureBytes {
        try open(sealed, nonce: nonce[...], aad: aad[...], [])
    }

    /// As `open(_:nonce:aad:)`, with the nonce read where it lies and the associated data in two
    /// pieces, authenticated as if joined: opening the records of a file copies nothing out of it.
    public func open(_ sealed: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, aad first: ArraySlice<UInt8>,
                     _ second: ArraySlice<UInt8>) throws -> SecureBytes {
        try Self.check(nonce: nonce)
        guard sealed.count >= AESGCM.tagLength else {
            throw CryptoError.invalidInput("sealed data of \(sealed.count) bytes is shorter than the GCM tag")
        }
        let textLength = sealed.count - AESGCM.tagLength
        let output = try SecureBytes(count: textLength)
        try lock.withLock { _ in
            let cipher = handle
            try sealed.withUnsafeBytes { all in
                try nonce.withUnsafeBytes { try cipher.setIV($0) }
                try first.withUnsafeBytes { try cipher.authenticate($0) }
                try second.withUnsafeBytes { try cipher.authenticate($0) }
                let body = UnsafeRawBufferPointer(rebasing: all[0..<textLength])
                try output.withUnsafeMutableBytes { try cipher.decrypt(into: $0, from: body) }
                let tag = UnsafeRawBufferPointer(rebasing: all[textLength...])
                let err = gcry_cipher_checktag(cipher.raw, tag.baseAddress, tag.count)
                if err != 0 {
                    output.removeAll()
                    if coffer_gpg_err_code(err) == COFFER_GPG_ERR_CHECKSUM { throw CryptoError.authenticationFailed }
                    throw gcryError(err, "gcry_cipher_checktag")
                }
            }
        }
        return output
    }

    private func seal(_ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try Self.check(nonce: nonce)
        var result = [UInt8](repeating: 0, count: plaintext.count + AESGCM.tagLength)
        try lock.withLock { _ in
            let cipher = handle
            try nonce.withUnsafeBytes { try cipher.setIV($0) }
            try aad.withUnsafeBytes { try cipher.authenticate($0) }
            try result.withUnsafeMutableBytes { out in
                try cipher.encrypt(into: out, from: plaintext)
                let tag = UnsafeMutableRawBufferPointer(rebasing: out[plaintext.count...])
                try gcryCheck(gcry_cipher_gettag(cipher.raw, tag.baseAddress, tag.count), "gcry_cipher_gettag")
            }
        }
        return result
    }

    private static func check(nonce: some Collection<UInt8>) throws {
        guard nonce.count == AESGCM.nonceLength else {
            throw CryptoError.invalidInput("GCM nonce must be \(AESGCM.nonceLength) bytes, got \(nonce.count)")
        }
    }
}
