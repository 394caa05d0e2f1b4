import CGcrypt

/// An owned gcry_mpi_t, released (and, if secure, wiped by libgcrypt) with the object.
/// Internal helper for the DH group arithmetic.
final class MPI {
    let raw: gcry_mpi_t

    private init(raw: gcry_mpi_t) { self.raw = raw }

    deinit { gcry_mpi_release(raw) }

    /// A new zero value in secure memory, room for `bits` bits.
    static func secure(bits: UInt32) throws -> MPI {
        Crypto.ensureInitialized()
        guard let raw = gcry_mpi_snew(bits) else {
            throw CryptoError.secureMemoryExhausted(requested: Int(bits / 8))
        }
        return MPI(raw: raw)
    }

    /// Reads an unsigned big-endian integer. The MPI is in secure memory if `bytes` is.
    static func scan(_ bytes: UnsafeRawBufferPointer) throws -> MPI {
        Crypto.ensureInitialized()
        var raw: gcry_mpi_t?
        var zero: UInt8 = 0
        let err = withUnsafeBytes(of: &zero) { z in
            gcry_mpi_scan(&raw, GCRYMPI_FMT_USG,
                          bytes.count > 0 ? bytes.baseAddress : z.baseAddress, bytes.count, nil)
        }
        try gcryCheck(err, "gcry_mpi_scan")
        guard let raw else { throw CryptoError.invalidInput("gcry_mpi_scan returned no value") }
        return MPI(raw: raw)
    }

    static func scan(_ bytes: [UInt8]) throws -> MPI {
        try bytes.withUnsafeBytes { try scan($0) }
    }

    static func scan(_ bytes: SecureBytes) throws -> MPI {
        try bytes.withUnsafeBytes { try scan($0) }
    }

    var bitCount: Int { Int(gcry_mpi_get_nbits(raw)) }

    /// Compares with another value: negative, zero or positive like memcmp.
    func compare(_ other: MPI) -> Int32 { gcry_mpi_cmp(raw, other.raw) }

    func compare(_ value: UInt) -> Int32 { gcry_mpi_cmp_ui(raw, value) }

    /// Writes the value big-endian, left-padded with zeros, filling all of `out`.
    func write(into out: UnsafeMutableRawBufferPointer) throws {
        let needed = (bitCount + 7) / 8
        precondition(needed <= out.count, "MPI does not fit its output buffer")
        if let base = out.baseAddress { wipe(base, out.count) }
        guard needed > 0 else { return }
        var written = 0
        try gcryCheck(gcry_mpi_print(GCRYMPI_FMT_USG, out.baseAddress! + (out.count - needed),
                                     needed, &written, raw), "gcry_mpi_print")
        precondition(written == needed, "gcry_mpi_print wrote an unexpected length")
    }
}
