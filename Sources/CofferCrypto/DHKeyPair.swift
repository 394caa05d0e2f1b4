import CGcrypt

/// The 1024-bit MODP group of RFC 2409 (Second Oakley Group), generator 2, with gcry_mpi.
///
/// The private exponent lives in a secure-memory MPI. `sharedSecret` only reads it, so one key
/// pair may be used from several threads. A key pair is charged to the secure-memory budget
/// for its big numbers and those of its computations (libgcrypt cannot report an exhausted
/// pool for them: it aborts).
public final class DHKeyPair: @unchecked Sendable {   // immutable after init; gcry_mpi_powm only reads the exponent
    public static let primeLength = 128

    private let reservation: SecureReservation
    /// The private exponent x (secure memory).
    private let privateExponent: MPI

    /// big-endian, left-padded to 128 bytes
    public let publicKey: [UInt8]

    /// Bits of a random private exponent. The group offers about 80 bits of security; an
    /// exponent of twice the security level is enough (RFC 7919, section 5.2), and 256 bits keeps
    /// a margin while making each session's two exponentiations about four times cheaper than a
    /// full-size exponent. The peer cannot tell: the public value has the same form.
    public static let privateExponentBits = 256

    /// A random private exponent of `privateExponentBits` bits.
    public init() throws {
        reservation = try SecureReservation(SecureReservation.diffieHellmanBytes)
        let x = try MPI.secure(bits: UInt32(Self.privateExponentBits))
        repeat {
            gcry_mpi_randomize(x.raw, UInt32(Self.privateExponentBits), GCRY_STRONG_RANDOM)
        } while x.compare(1) <= 0
        privateExponent = x
        publicKey = try Self.publicValue(for: x)
    }

    /// big-endian; for known-answer tests. Must be at least 2 and at most 128 significant bytes.
    public init(privateKey: [UInt8]) throws {
        reservation = try SecureReservation(SecureReservation.diffieHellmanBytes)
        let significant = privateKey.drop { $0 == 0 }
        guard significant.count <= Self.primeLength else {
            throw CryptoError.invalidInput("DH private key longer than \(Self.primeLength) bytes")
        }
        // Scan from secure memory so that the MPI is allocated there too.
        let x = try MPI.scan(try SecureBytes(significant))
        guard x.compare(1) > 0 else {
            throw CryptoError.invalidInput("DH private key must be at least 2")
        }
        privateExponent = x
        publicKey = try Self.publicValue(for: x)
    }

    /// Peer key: big-endian unsigned, any length, leading zeros allowed. Rejects peer <= 1,
    /// >= p-1, or longer than 128 significant bytes -> .invalidInput. Returns S left-padded to 128 bytes.
    public func sharedSecret(peerPublicKey: [UInt8]) throws -> SecureBytes {
        let significant = peerPublicKey.drop { $0 == 0 }
        guard significant.count <= Self.primeLength else {
            throw CryptoError.invalidInput(
                "DH peer public key has \(significant.count) significant bytes, more than \(Self.primeLength)")
        }
        let peer = try significant.withUnsafeBytes { try MPI.scan($0) }
        let primeMinusOne = try MPI.scan(DHGroup.primeMinusOne)
        guard peer.compare(1) > 0, peer.compare(primeMinusOne) < 0 else {
            throw CryptoError.invalidInput("DH peer public key out of range (must be 1 < Y < p-1)")
        }
        let prime = try MPI.scan(DHGroup.prime)
        let s = try MPI.secure(bits: 1024)
        gcry_mpi_powm(s.raw, peer.raw, privateExponent.raw, prime.raw)
        let result = try SecureBytes(count: Self.primeLength)
        try result.withUnsafeMutableBytes { try s.write(into: $0) }
        return result
    }

    /// g^x mod p, left-padded to 128 bytes.
    private static func publicValue(for x: MPI) throws -> [UInt8] {
        let prime = try MPI.scan(DHGroup.prime)
        let g = try MPI.scan(DHGroup.generator)
        let y = try MPI.secure(bits: 1024)
        gcry_mpi_powm(y.raw, g.raw, x.raw, prime.raw)
        var result = [UInt8](repeating: 0, count: primeLength)
        try result.withUnsafeMutableBytes { try y.write(into: $0) }
        return result
    }
}
