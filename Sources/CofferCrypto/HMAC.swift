import CGcrypt

/// A reusable keyed HMAC (keeps one gcry_md handle; reset between uses), on SHA-256 unless
/// said otherwise (one-time passwords also use SHA-1 and SHA-512). Not thread-safe.
///
/// A secure handle (the default) keeps the key and hash state in secure memory and is charged
/// to the secure-memory budget while open. A handle whose key and messages are not secret (the
/// store's attribute lookup key, kept in clear in the file header) lives in ordinary memory.
public final class HMAC: @unchecked Sendable {   // a gcrypt handle moved between threads, never used by two at once
    /// The hash an HMAC is built on.
    public enum Algorithm: Sendable {
        case sha1, sha256, sha512

        /// Bytes of a code.
        public var outputLength: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        }

        var gcryptAlgorithm: Int32 {
            switch self {
            case .sha1: COFFER_GCRY_MD_SHA1
            case .sha256: COFFER_GCRY_MD_SHA256
            case .sha512: COFFER_GCRY_MD_SHA512
            }
        }
    }

    public let algorithm: Algorithm
    private let handle: gcry_md_hd_t
    private let reservation: SecureReservation?

    public init(key: SecureBytes, algorithm: Algorithm = .sha256) throws {
        self.algorithm = algorithm
        reservation = try SecureReservation(SecureReservation.handleBytes)
        handle = try key.withUnsafeBytes { try Self.open(key: $0, algorithm: algorithm, secure: true) }
    }

    /// A MAC keyed with `key`; `secure: false` when neither the key nor the messages are secret.
    public init(key: [UInt8], algorithm: Algorithm = .sha256, secure: Bool = true) throws {
        self.algorithm = algorithm
        reservation = secure ? try SecureReservation(SecureReservation.handleBytes) : nil
        handle = try key.withUnsafeBytes { try Self.open(key: $0, algorithm: algorithm, secure: secure) }
    }

    deinit { gcry_md_close(handle) }

    private static func open(key: UnsafeRawBufferPointer, algorithm: Algorithm, secure: Bool) throws -> gcry_md_hd_t {
        Crypto.ensureInitialized()
        var hd: gcry_md_hd_t?
        let err = gcry_md_open(&hd, algorithm.gcryptAlgorithm,
                               COFFER_GCRY_MD_FLAG_HMAC | (secure ? COFFER_GCRY_MD_FLAG_SECURE : 0))
        guard err == 0, let hd else {
            if coffer_gpg_err_code(err) == GPG_ERR_ENOMEM.rawValue {
                throw CryptoError.secureMemoryExhausted(requested: 0)
            }
            throw gcryError(err, "gcry_md_open")
        }
        // An empty key is valid HMAC (same as 64 zero bytes); give libgcrypt a real pointer.
        var zero: UInt8 = 0
        let setkeyErr = withUnsafeMutableBytes(of: &zero) { z in
            key.count > 0 ? gcry_md_setkey(hd, key.baseAddress, key.count)
                          : gcry_md_setkey(hd, z.baseAddress, 0)
        }
        if setkeyErr != 0 {
            gcry_md_close(hd)
            throw gcryError(setkeyErr, "gcry_md_setkey")
        }
        return hd
    }

    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { code(for: [$0]) }
    }

    public func authenticationCode(for message: SecureBytes) -> [UInt8] {
        message.withUnsafeBytes { code(for: [$0]) }
    }

    /// Convenience one-shot.
    public static func authenticationCode(key: [UInt8], message: [UInt8], algorithm: Algorithm = .sha256) throws -> [UInt8] {
        try HMAC(key: key, algorithm: algorithm).authenticationCode(for: message)
    }

    /// MAC over the concatenation of `parts`, returned in ordinary memory.
    func code(for parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        let length = algorithm.outputLength
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            compute(parts, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = length
        }
    }

    /// MAC over the concatenation of `parts`, written to `out` (`algorithm.outputLength` bytes;
    /// may be secure memory).
    func compute(_ parts: [UnsafeRawBufferPointer], into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= algorithm.outputLength)
        gcry_md_reset(handle)
        for part in parts where part.count > 0 {
            gcry_md_write(handle, part.baseAddress, part.count)
        }
        // gcry_md_read finalises and returns a pointer into the (secure) handle.
        guard let digest = gcry_md_read(handle, algorithm.gcryptAlgorithm) else {
            fatalError("gcry_md_read returned no digest for HMAC")
        }
        out.baseAddress!.copyMemory(from: digest, byteCount: algorithm.outputLength)
    }
}
