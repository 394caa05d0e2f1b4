/// AES-256-GCM, 12-byte nonce, 16-byte tag appended to ciphertext: one-shot calls. For many
/// records under one key, keep an `AESGCMKey`. Never reuse a nonce with the same key.
public enum AESGCM {
    public static let nonceLength = 12, tagLength = 16, keyLength = 32

    public static func seal(_ plaintext: SecureBytes, key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try AESGCMKey(key).seal(plaintext, nonce: nonce, aad: aad)
    }

    public static func seal(_ plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try AESGCMKey(key).seal(plaintext, nonce: nonce, aad: aad)
    }

    /// Throws .authenticationFailed on tag mismatch (gcrypt GPG_ERR_CHECKSUM) -- plaintext never returned then.
    public static func open(_ sealed: ArraySlice<UInt8>, key: SecureBytes, nonce: [UInt8], aad: [UInt8]) throws -> SecureBytes {
        try AESGCMKey(key).open(sealed, nonce: nonce, aad: aad)
    }
}
