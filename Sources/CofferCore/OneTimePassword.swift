import CofferCrypto

/// A time-based one-time password (TOTP, RFC 6238): the secret an authenticator app shares
/// with a service, and how codes are made from it.
public struct OneTimePassword: Sendable {
    /// The HMAC hash (RFC 6238 allows SHA-1, SHA-256 and SHA-512; SHA-1 is what most services use).
    public enum Algorithm: String, CaseIterable, Sendable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"

        var hmac: HMAC.Algorithm {
            switch self {
            case .sha1: .sha1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        }
    }

    /// A code, and how long it stays valid.
    public struct Code: Equatable, Sendable {
        public let digits: String
        public let secondsLeft: Int

        public init(digits: String, secondsLeft: Int) {
            self.digits = digits
            self.secondsLeft = secondsLeft
        }
    }

    public static let digitRange = 6...8

    public let secret: SecureBytes
    public let algorithm: Algorithm
    public let digits: Int
    /// Seconds each code lasts.
    public let period: Int

    public init(secret: SecureBytes, algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30) throws(CofferError) {
        guard !secret.isEmpty else { throw .invalidArgument("a one-time-password secret cannot be empty") }
        guard Self.digitRange.contains(digits) else { throw .invalidArgument("a one-time password has 6 to 8 digits, not \(digits)") }
        guard period > 0 else { throw .invalidArgument("a one-time password's period is a positive number of seconds, not \(period)") }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// The code valid at `time` (seconds since 1970).
    public func code(at time: UInt64) throws -> Code {
        let counter = time / UInt64(period)
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        let mac = try HMAC(key: secret, algorithm: algorithm.hmac).authenticationCode(for: message)
        // Dynamic truncation (RFC 4226 §5.3).
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let number = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(number % modulus)
        let padded = String(repeating: "0", count: digits - text.count) + text
        return Code(digits: padded, secondsLeft: period - Int(time % UInt64(period)))
    }
}
