import CGcrypt

/// AES-256-GCM, 12-byte nonce, 16-byte tag appended to ciphertext.
///
/// Each call opens its own cipher handle (in secure memory), so the functions are safe to call
/// from any thread. Never reuse a nonce with the same key.
public enum AESGCM {
    public static let nonceLength = 12, tagLength = 16, keyLength = 32

    public static func seal(_ plaintext: SecureBytes, key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, key: key, nonce: nonce, aad: aad) }
    }

    public static func seal(_ plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try seal($0, key: key, nonce: nonce, aad: aad) }
    }

    /// Throws .authenticationFailed on tag mismatch (gcrypt GPG_ERR_CHECKSUM) -- plaintext never returned then.
    public static func open(_ sealed: ArraySlice<UInt8>, key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> SecureBytes {
        try checkKeyAndNonce(key: key, nonce: nonce)
        guard sealed.count >= tagLength else {
            throw CryptoError.invalidInput("sealed data of \(sealed.count) bytes is shorter than the GCM tag")
        }
        let cipher = try CipherHandle(algorithm: COFFER_GCRY_CIPHER_AES256,
                                      mode: COFFER_GCRY_CIPHER_MODE_GCM, key: key)
        let textLength = sealed.count - tagLength
        let output = try SecureBytes(count: textLength)
        try sealed.withUnsafeBytes { all in
            try nonce.withUnsafeBytes { try cipher.setIV($0) }
            try aad.withUnsafeBytes { try cipher.authenticate($0) }
            let body = UnsafeRawBufferPointer(rebasing: all[0..<textLength])
            try output.withUnsafeMutableBytes { try cipher.decrypt(into: $0, from: body) }
            let tag = UnsafeRawBufferPointer(rebasing: all[textLength...])
            let err = gcry_cipher_checktag(cipher.raw, tag.baseAddress, tag.count)
            if err != 0 {
                output.removeAll()
                if coffer_gpg_err_code(err) == COFFER_GPG_ERR_CHECKSUM {
                    throw CryptoError.authenticationFailed
                }
                throw gcryError(err, "gcry_cipher_checktag")
            }
        }
        return output
    }

    /// Shared implementation of both `seal` overloads.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try checkKeyAndNonce(key: key, nonce: nonce)
        let cipher = try CipherHandle(algorithm: COFFER_GCRY_CIPHER_AES256,
                                      mode: COFFER_GCRY_CIPHER_MODE_GCM, key: key)
        try nonce.withUnsafeBytes { try cipher.setIV($0) }
        try aad.withUnsafeBytes { try cipher.authenticate($0) }
        var result = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        try result.withUnsafeMutableBytes { out in
            try cipher.encrypt(into: out, from: plaintext)
            let tag = UnsafeMutableRawBufferPointer(rebasing: out[plaintext.count...])
            try gcryCheck(gcry_cipher_gettag(cipher.raw, tag.baseAddress, tag.count),
                          "gcry_cipher_gettag")
        }
        return result
    }

    private static func checkKeyAndNonce(key: SecureBytes, nonce: [UInt8]) throws {
        guard key.count == keyLength else {
            throw CryptoError.invalidInput("AES-256-GCM key must be \(keyLength) bytes, got \(key.count)")
        }
        guard nonce.count == nonceLength else {
            throw CryptoError.invalidInput("GCM nonce must be \(nonceLength) bytes, got \(nonce.count)")
        }
    }
}
