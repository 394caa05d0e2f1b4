/// What went wrong in a CofferCrypto operation.
///
/// Descriptions never contain secret bytes: only lengths, parameter names and libgcrypt's own
/// error text.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// A GCM tag did not match (tampered data, wrong key, wrong nonce or wrong AAD).
    case authenticationFailed
    /// The locked memory Coffer may hold (or libgcrypt's pool) has no room for `requested` bytes.
    case secureMemoryExhausted(requested: Int)
    /// An argument was malformed; the text says which and why (never secret bytes).
    case invalidInput(String)
    /// libgcrypt reported an error: the failing function, the gpg error code and its text.
    case library(function: String, code: UInt32, message: String)

    public var description: String {
        switch self {
        case .authenticationFailed:
            return "authentication failed (tag mismatch)"
        case .secureMemoryExhausted(let requested):
            return "secure memory exhausted (requested \(requested) bytes)"
        case .invalidInput(let what):
            return "invalid input: \(what)"
        case .library(let function, let code, let message):
            return "\(function) failed: \(message) (gpg error code \(code))"
        }
    }
}
