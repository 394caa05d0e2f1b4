import CGcrypt

/// Converts a libgcrypt return value into a thrown `CryptoError.library` (internal helper).
@inline(__always)
func gcryCheck(_ err: gcry_error_t, _ function: StaticString) throws {
    if err != 0 { throw gcryError(err, function) }
}

/// Builds `CryptoError.library` from a non-zero libgcrypt error value.
func gcryError(_ err: gcry_error_t, _ function: StaticString) -> CryptoError {
    let code = coffer_gpg_err_code(err)
    let message = gcry_strerror(err).map { String(cString: $0) } ?? "unknown error"
    return .library(function: "\(function)", code: UInt32(code), message: message)
}
