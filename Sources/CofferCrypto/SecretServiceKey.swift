/// The Secret Service transfer key: HKDF-SHA256(no salt, empty info, 16 bytes) over the padded S.
public enum SecretServiceKey {
    /// `sharedSecret` must be S left-padded to exactly 128 bytes (as `DHKeyPair.sharedSecret`
    /// returns it); any other length is `.invalidInput`, because an unpadded S silently yields a
    /// different key in about 1 of 256 sessions.
    public static func derive(sharedSecret: SecureBytes) throws -> SecureBytes {
        guard sharedSecret.count == DHKeyPair.primeLength else {
            throw CryptoError.invalidInput(
                "shared secret must be padded to \(DHKeyPair.primeLength) bytes, got \(sharedSecret.count)")
        }
        return try HKDF.sha256(inputKeyMaterial: sharedSecret, salt: nil, info: [],
                               outputLength: AES128CBC.keyLength)
    }
}
