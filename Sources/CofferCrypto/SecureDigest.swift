import CGcrypt

/// Hashes of secret data (a password and its salt, a decrypted file), computed in a libgcrypt
/// secure context and returned in secure memory. For data that is not secret, `Digest`.
public enum SecureDigest {
    public enum Algorithm: Sendable {
        case sha256
        /// Only to read formats that use it (gnome-keyring's files check their plaintext with it).
        case md5

        var code: Int32 {
            switch self {
            case .sha256: COFFER_GCRY_MD_SHA256
            case .md5: COFFER_GCRY_MD_MD5
            }
        }
    }

    /// The digest of `parts`, one after the other.
    public static func hash(_ algorithm: Algorithm, _ parts: SecureBytes...) throws -> SecureBytes {
        try hash(algorithm) { write in for part in parts { part.withUnsafeBytes(write) } }
    }

    /// The digest of `bytes[range]`.
    public static func hash(_ algorithm: Algorithm, _ bytes: SecureBytes, range: Range<Int>) throws -> SecureBytes {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else {
            throw CryptoError.invalidInput("range \(range) out of bounds 0..<\(bytes.count)")
        }
        return try hash(algorithm) { write in
            bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[range])) }
        }
    }

    private static func hash(_ algorithm: Algorithm,
                             _ feed: ((UnsafeRawBufferPointer) -> Void) -> Void) throws -> SecureBytes {
        Crypto.ensureInitialized()
        let reservation = try SecureReservation(SecureReservation.handleBytes)
        defer { withExtendedLifetime(reservation) {} }
        var handle: gcry_md_hd_t?
        let err = gcry_md_open(&handle, algorithm.code, COFFER_GCRY_MD_FLAG_SECURE)
        guard err == 0, let handle else {
            if coffer_gpg_err_code(err) == GPG_ERR_ENOMEM.rawValue { throw CryptoError.secureMemoryExhausted(requested: 0) }
            throw gcryError(err, "gcry_md_open")
        }
        defer { gcry_md_close(handle) }
        feed { gcry_md_write(handle, $0.baseAddress, $0.count) }
        let length = Int(gcry_md_get_algo_dlen(algorithm.code))
        guard let digest = gcry_md_read(handle, algorithm.code) else {
            throw CryptoError.invalidInput("libgcrypt gave no digest")
        }
        return try SecureBytes(copying: UnsafeRawBufferPointer(start: digest, count: length))
    }
}
