import CofferCore
import CofferCrypto
import FoundationEssentials

/// Coffer's own tests start hundreds of daemons and CLIs, each creating or opening collections:
/// with production Argon2id (64 MiB, three passes) that is most of the suite's time. They set
/// `COFFER_TEST_FAST_KDF=1`, and a debug build then gives new collections `Argon2Parameters.testing`.
/// A release build (what users install) refuses to start with the variable set: a password
/// protected by those parameters is guessed a thousand times faster.
public enum TestKeyDerivation {
    /// The environment variable the tests set.
    public static let variable = "COFFER_TEST_FAST_KDF"

    /// The Argon2id parameters for what this process newly protects with a password: collections,
    /// changed passwords, backups.
    public static func parameters(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(CofferError) -> Argon2Parameters {
        guard let value = environment[variable], !value.isEmpty else { return .default }
        #if DEBUG
        guard value == "1" else {
            throw .invalidArgument("\(variable) is \"\(value)\": set it to 1 (fast, insecure key derivation for tests) or unset it")
        }
        return .testing
        #else
        throw .invalidArgument("""
            \(variable) is set, which asks for key derivation that makes passwords a thousand times \
            faster to guess: only a debug build of Coffer, under its own tests, accepts it. Unset it \
            (`unset \(variable)`) and start again.
            """)
        #endif
    }
}
