import CGcrypt

/// Password-based key derivation.
public enum KDF {
    /// Argon2id (gcry_kdf_open GCRY_KDF_ARGON2 / GCRY_KDF_ARGON2ID). Validates parameters
    /// (t>=1, m>=8*p, p in 1...16, salt >= 8 bytes, out 4...1024) -> .invalidInput.
    ///
    /// libgcrypt 1.10 rejects an empty password, so an empty password is `.invalidInput` too.
    public static func argon2id(password: SecureBytes, salt: [UInt8],
                                parameters: Argon2Parameters, outputLength: Int = 32) throws -> SecureBytes {
        try argon2id(password: password, salt: salt, secret: nil, associatedData: [],
                     parameters: parameters, outputLength: outputLength)
    }

    /// Argon2id with the optional secret value K and associated data X of RFC 9106 (used by
    /// the known-answer tests; the public API does not expose them).
    static func argon2id(password: SecureBytes, salt: [UInt8], secret: SecureBytes?,
                         associatedData: [UInt8], parameters: Argon2Parameters,
                         outputLength: Int) throws -> SecureBytes {
        let t = parameters.iterations, m = parameters.memoryKiB, p = parameters.parallelism
        guard t >= 1 else { throw CryptoError.invalidInput("Argon2 iterations must be >= 1") }
        guard (1...16).contains(p) else {
            throw CryptoError.invalidInput("Argon2 parallelism must be in 1...16, got \(p)")
        }
        guard UInt64(m) >= 8 * UInt64(p) else {
            throw CryptoError.invalidInput("Argon2 memory must be >= 8*parallelism KiB, got \(m)")
        }
        guard salt.count >= 8 else {
            throw CryptoError.invalidInput("Argon2 salt must be >= 8 bytes, got \(salt.count)")
        }
        guard (4...1024).contains(outputLength) else {
            throw CryptoError.invalidInput("Argon2 output length must be in 4...1024, got \(outputLength)")
        }
        guard !password.isEmpty else {
            throw CryptoError.invalidInput("Argon2 password must not be empty")
        }
        Crypto.ensureInitialized()

        let output = try SecureBytes(count: outputLength)
        let params: [UInt] = [UInt(outputLength), UInt(t), UInt(m), UInt(p)]
        // libgcrypt keeps the pointers given to gcry_kdf_open until gcry_kdf_compute is done,
        // so the whole open/compute/final sequence runs inside the buffers' scopes.
        let secretKey = try secret ?? SecureBytes(count: 0)
        try password.withUnsafeBytes { pw in
            try salt.withUnsafeBytes { s in
                try secretKey.withUnsafeBytes { k in
                    try associatedData.withUnsafeBytes { ad in
                        try params.withUnsafeBufferPointer { prm in
                            var handle: gcry_kdf_hd_t?
                            try gcryCheck(gcry_kdf_open(&handle, COFFER_GCRY_KDF_ARGON2,
                                                        COFFER_GCRY_KDF_ARGON2ID,
                                                        prm.baseAddress, UInt32(prm.count),
                                                        pw.baseAddress, pw.count,
                                                        s.baseAddress, s.count,
                                                        k.count > 0 ? k.baseAddress : nil, k.count,
                                                        ad.count > 0 ? ad.baseAddress : nil, ad.count),
                                          "gcry_kdf_open")
                            defer { gcry_kdf_close(handle) }
                            try gcryCheck(gcry_kdf_compute(handle, nil), "gcry_kdf_compute")
                            try output.withUnsafeMutableBytes { out in
                                try gcryCheck(gcry_kdf_final(handle, out.count, out.baseAddress),
                                              "gcry_kdf_final")
                            }
                        }
                    }
                }
            }
        }
        return output
    }
}
