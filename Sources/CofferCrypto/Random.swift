import CGcrypt

/// Random bytes from libgcrypt's RNG (configured by `Crypto.initialize` to be the system RNG,
/// i.e. the kernel's getrandom).
public enum Random {
    /// `count` bytes at GCRY_STRONG_RANDOM level (keys, IVs, salts).
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative random byte count")
        Crypto.ensureInitialized()
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { gcry_randomize($0.baseAddress, $0.count, GCRY_STRONG_RANDOM) }
        return result
    }

    /// `count` bytes from gcry_create_nonce: fast and unique, for nonces and IVs only.
    public static func nonce(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative nonce length")
        Crypto.ensureInitialized()
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { gcry_create_nonce($0.baseAddress, $0.count) }
        return result
    }

    /// `count` GCRY_STRONG_RANDOM bytes generated directly into secure memory (keys).
    ///
    /// STRONG rather than VERY_STRONG: with the system RNG both come from the kernel CSPRNG,
    /// but VERY_STRONG costs about 8 ms per call here.
    public static func secureBytes(_ count: Int) throws -> SecureBytes {
        let result = try SecureBytes(count: count)
        result.withUnsafeMutableBytes {
            gcry_randomize($0.baseAddress, $0.count, GCRY_STRONG_RANDOM)
        }
        return result
    }
}
