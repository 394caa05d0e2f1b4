import CGcrypt

/// An owned gcry_cipher handle allocated in secure memory (the key schedule stays there);
/// closed (and thereby wiped by libgcrypt) when released. Internal helper; the keyed cipher
/// types that keep one use it only under their lock. Charged to the secure-memory budget
/// while open.
final class CipherHandle: @unchecked Sendable {   // a gcrypt handle used only under its owner's lock
    let raw: gcry_cipher_hd_t
    private let reservation: SecureReservation

    /// Opens `algorithm`/`mode` with GCRY_CIPHER_SECURE and sets `key`.
    init(algorithm: Int32, mode: Int32, key: SecureBytes) throws {
        Crypto.ensureInitialized()
        reservation = try SecureReservation(SecureReservation.handleBytes)
        var handle: gcry_cipher_hd_t?
        let err = gcry_cipher_open(&handle, algorithm, mode, COFFER_GCRY_CIPHER_SECURE)
        guard err == 0, let handle else {
            if coffer_gpg_err_code(err) == GPG_ERR_ENOMEM.rawValue {
                throw CryptoError.secureMemoryExhausted(requested: 0)
            }
            throw gcryError(err, "gcry_cipher_open")
        }
        raw = handle
        try key.withUnsafeBytes { k in
            try gcryCheck(gcry_cipher_setkey(handle, k.baseAddress, k.count), "gcry_cipher_setkey")
        }
    }

    deinit { gcry_cipher_close(raw) }

    func setIV(_ iv: UnsafeRawBufferPointer) throws {
        try gcryCheck(gcry_cipher_setiv(raw, iv.baseAddress, iv.count), "gcry_cipher_setiv")
    }

    func authenticate(_ aad: UnsafeRawBufferPointer) throws {
        guard aad.count > 0 else { return }
        try gcryCheck(gcry_cipher_authenticate(raw, aad.baseAddress, aad.count),
                      "gcry_cipher_authenticate")
    }

    func encrypt(into out: UnsafeMutableRawBufferPointer, from input: UnsafeRawBufferPointer) throws {
        precondition(out.count >= input.count)
        guard input.count > 0 else { return }
        try gcryCheck(gcry_cipher_encrypt(raw, out.baseAddress, input.count,
                                          input.baseAddress, input.count), "gcry_cipher_encrypt")
    }

    /// Encrypts `buffer` where it is.
    func encryptInPlace(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard buffer.count > 0 else { return }
        try gcryCheck(gcry_cipher_encrypt(raw, buffer.baseAddress, buffer.count, nil, 0), "gcry_cipher_encrypt")
    }

    func decrypt(into out: UnsafeMutableRawBufferPointer, from input: UnsafeRawBufferPointer) throws {
        precondition(out.count >= input.count)
        guard input.count > 0 else { return }
        try gcryCheck(gcry_cipher_decrypt(raw, out.baseAddress, input.count,
                                          input.baseAddress, input.count), "gcry_cipher_decrypt")
    }
}
