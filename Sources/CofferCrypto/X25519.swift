import CGcrypt

/// Diffie-Hellman on Curve25519 (RFC 7748), through libgcrypt's `gcry_ecc_mul_point`. Keys are
/// 32 bytes; private keys and shared secrets stay in secure memory (libgcrypt clamps a private
/// key as RFC 7748 says).
public enum X25519 {
    public static let keyLength = 32
    /// The base point: u = 9.
    private static let basePoint: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)

    /// A new random private key.
    public static func newPrivateKey() throws -> SecureBytes {
        try Random.secureBytes(keyLength)
    }

    /// The public key of `privateKey`.
    public static func publicKey(of privateKey: SecureBytes) throws -> [UInt8] {
        let point = try multiply(privateKey, basePoint)
        return point.unprotectedArray(0..<keyLength)
    }

    /// The secret `privateKey` shares with the holder of `peerPublicKey`. Throws
    /// `.invalidInput` for a key of the wrong length, or one of small order (the result would
    /// be zero, whatever the private key).
    public static func sharedSecret(privateKey: SecureBytes, peerPublicKey: [UInt8]) throws -> SecureBytes {
        guard peerPublicKey.count == keyLength else {
            throw CryptoError.invalidInput("a Curve25519 public key has \(keyLength) bytes, not \(peerPublicKey.count)")
        }
        let shared = try multiply(privateKey, peerPublicKey)
        guard shared.withUnsafeBytes({ $0.contains { $0 != 0 } }) else {
            throw CryptoError.invalidInput("the Curve25519 public key is of small order")
        }
        return shared
    }

    private static func multiply(_ scalar: SecureBytes, _ point: [UInt8]) throws -> SecureBytes {
        guard scalar.count == keyLength else {
            throw CryptoError.invalidInput("a Curve25519 private key has \(keyLength) bytes, not \(scalar.count)")
        }
        let result = try SecureBytes(count: keyLength)
        let error = result.withUnsafeMutableBytes { out in
            scalar.withUnsafeBytes { k in
                point.withUnsafeBytes { u in
                    gcry_ecc_mul_point(Int32(GCRY_ECC_CURVE25519.rawValue), out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                       k.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                       u.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        try gcryCheck(error, "gcry_ecc_mul_point")
        return result
    }
}
