/// RFC 5869 HKDF on HMAC-SHA256 (libgcrypt 1.10 has none). nil salt = 32 zero bytes.
public enum HKDF {
    /// Extract-then-expand; `outputLength` must be in 1...255*32. PRK and all intermediate
    /// blocks stay in secure memory.
    public static func sha256(inputKeyMaterial: SecureBytes, salt: [UInt8]?, info: [UInt8], outputLength: Int) throws -> SecureBytes {
        let hashLength = HMAC.Algorithm.sha256.outputLength
        guard outputLength >= 1, outputLength <= 255 * hashLength else {
            throw CryptoError.invalidInput("HKDF output length must be in 1...\(255 * hashLength), got \(outputLength)")
        }
        // Extract: PRK = HMAC(salt, IKM).
        let prk = try SecureBytes(count: hashLength)
        let extractor = try HMAC(key: salt ?? [UInt8](repeating: 0, count: hashLength))
        inputKeyMaterial.withUnsafeBytes { ikm in
            prk.withUnsafeMutableBytes { extractor.compute([ikm], into: $0) }
        }
        // Expand: T(i) = HMAC(PRK, T(i-1) | info | i), output = T(1) | T(2) | ...
        let expander = try HMAC(key: prk)
        let blocks = (outputLength + hashLength - 1) / hashLength
        let okm = try SecureBytes(count: blocks * hashLength)
        info.withUnsafeBytes { infoBytes in
            okm.withUnsafeMutableBytes { out in
                for i in 1...blocks {
                    var counter = UInt8(i)
                    withUnsafeBytes(of: &counter) { c in
                        let current = UnsafeMutableRawBufferPointer(
                            rebasing: out[(i - 1) * hashLength ..< i * hashLength])
                        let previous = i == 1
                            ? UnsafeRawBufferPointer(start: out.baseAddress, count: 0)
                            : UnsafeRawBufferPointer(rebasing: out[(i - 2) * hashLength ..< (i - 1) * hashLength])
                        expander.compute([previous, infoBytes, c], into: current)
                    }
                }
            }
        }
        okm.truncate(to: outputLength)
        return okm
    }
}
