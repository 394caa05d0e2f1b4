import CGcrypt

/// Unkeyed hashes and checksums.
public enum Digest {
    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Crypto.ensureInitialized()
        return [UInt8](unsafeUninitializedCapacity: 32) { out, initialized in
            bytes.withUnsafeBytes {
                gcry_md_hash_buffer(COFFER_GCRY_MD_SHA256, out.baseAddress, $0.baseAddress, $0.count)
            }
            initialized = 32
        }
    }

    /// GCRY_MD_CRC32 (IEEE 802.3, as zlib's crc32).
    public static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        Crypto.ensureInitialized()
        var digest: UInt32 = 0
        withUnsafeMutableBytes(of: &digest) { out in
            bytes.withUnsafeBytes {
                gcry_md_hash_buffer(COFFER_GCRY_MD_CRC32, out.baseAddress, $0.baseAddress, $0.count)
            }
        }
        // libgcrypt writes the CRC big-endian.
        return UInt32(bigEndian: digest)
    }
}
