import CGcrypt

/// Unkeyed hashes and checksums.
public enum Digest {
    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { hash(COFFER_GCRY_MD_SHA256, length: 32, bytes) }

    /// MD5 of `bytes` (16 bytes): only for formats that use it (gnome-keyring's files).
    public static func md5(_ bytes: [UInt8]) -> [UInt8] { hash(COFFER_GCRY_MD_MD5, length: 16, bytes) }

    private static func hash(_ algorithm: Int32, length: Int, _ bytes: [UInt8]) -> [UInt8] {
        Crypto.ensureInitialized()
        return [UInt8](unsafeUninitializedCapacity: length) { out, initialized in
            bytes.withUnsafeBytes { gcry_md_hash_buffer(algorithm, out.baseAddress, $0.baseAddress, $0.count) }
            initialized = length
        }
    }

    /// CRC-32 (IEEE 802.3, as zlib's crc32), computed here eight bytes at a time: libgcrypt's
    /// one-shot digest call costs more in setup than a short record takes to checksum.
    public static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        let tables = crcTables
        var crc: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { buffer in
            var i = 0
            let n = buffer.count
            while i + 8 <= n {
                let low = crc ^ (UInt32(buffer[i]) | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2]) << 16 | UInt32(buffer[i + 3]) << 24)
                crc = tables[7 * 256 + Int(low & 0xFF)] ^ tables[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ tables[5 * 256 + Int((low >> 16) & 0xFF)] ^ tables[4 * 256 + Int(low >> 24)]
                    ^ tables[3 * 256 + Int(buffer[i + 4])] ^ tables[2 * 256 + Int(buffer[i + 5])]
                    ^ tables[256 + Int(buffer[i + 6])] ^ tables[Int(buffer[i + 7])]
                i += 8
            }
            while i < n {
                crc = tables[Int((crc ^ UInt32(buffer[i])) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
        }
        return ~crc
    }

    /// Eight 256-entry tables for slicing-by-8 (reflected polynomial 0xEDB88320).
    private static let crcTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            tables[n] = c
        }
        for n in 0..<256 {
            for k in 1..<8 {
                let previous = tables[(k - 1) * 256 + n]
                tables[k * 256 + n] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()
}
