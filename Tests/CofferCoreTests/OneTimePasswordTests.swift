import CofferCore
import CofferCrypto
import SystemKit
import Testing

/// TOTP against RFC 6238's test vectors (Appendix B), base32 against RFC 4648's, and the
/// otpauth:// URIs services hand out.
struct OneTimePasswordTests {
    static let seeds: [OneTimePassword.Algorithm: String] = [
        .sha1: "12345678901234567890",
        .sha256: "12345678901234567890123456789012",
        .sha512: "1234567890123456789012345678901234567890123456789012345678901234",
    ]

    /// (time, SHA-1, SHA-256, SHA-512), 8 digits each.
    static let vectors: [(UInt64, String, String, String)] = [
        (59, "94287082", "46119246", "90693936"),
        (1_111_111_109, "07081804", "68084774", "25091201"),
        (1_111_111_111, "14050471", "67062674", "99943326"),
        (1_234_567_890, "89005924", "91819424", "93441116"),
        (2_000_000_000, "69279037", "90698825", "38618901"),
        (20_000_000_000, "65353130", "77737706", "47863826"),
    ]

    @Test func rfc6238Vectors() throws {
        for (time, sha1, sha256, sha512) in Self.vectors {
            for (algorithm, expected) in [(OneTimePassword.Algorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
                let otp = try OneTimePassword(secret: try SecureBytes(Array(Self.seeds[algorithm]!.utf8)), algorithm: algorithm, digits: 8)
                #expect(try otp.code(at: time).digits == expected, "\(algorithm) at \(time)")
            }
        }
    }

    @Test func sixDigitsAndTheSecondsLeft() throws {
        let otp = try OneTimePassword(secret: try SecureBytes(Array(Self.seeds[.sha1]!.utf8)))
        #expect(try otp.code(at: 59) == .init(digits: "287082", secondsLeft: 1))
        #expect(try otp.code(at: 60).secondsLeft == 30)
        let minute = try OneTimePassword(secret: try SecureBytes(Array(Self.seeds[.sha1]!.utf8)), period: 60)
        #expect(try minute.code(at: 59).secondsLeft == 1 && minute.code(at: 59).digits == otp.code(at: 0).digits)
    }

    @Test func badParametersAreRefused() throws {
        let secret = try SecureBytes(Array("x".utf8))
        #expect(throws: CofferError.self) { try OneTimePassword(secret: secret, digits: 5) }
        #expect(throws: CofferError.self) { try OneTimePassword(secret: secret, digits: 9) }
        #expect(throws: CofferError.self) { try OneTimePassword(secret: secret, period: 0) }
        #expect(throws: CofferError.self) { try OneTimePassword(secret: try SecureBytes(capacity: 1)) }
    }

    @Test func base32OfRFC4648() throws {
        for (plain, encoded) in [("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
                                 ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"), ("foobar", "mzxw 6ytb oi")] {
            var out: [UInt8] = []
            try Base32.decode(Array(encoded.utf8)) { out.append($0) }
            #expect(out == Array(plain.utf8), "\(encoded)")
        }
        #expect(throws: Base32.DecodingError.invalidCharacter) { try Base32.decode(Array("MZ1W".utf8)) { _ in } }
        #expect(throws: Base32.DecodingError.invalidCharacter) { try Base32.decode(Array("MY==MY".utf8)) { _ in } }
        #expect(throws: Base32.DecodingError.invalidLength) { try Base32.decode(Array("MZXW6Y".utf8)) { _ in } }
    }

    @Test func anOTPAuthURI() throws {
        let uri = try OTPAuthURI(try SecureBytes(Array("otpauth://totp/Example:alice%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example%20Co&digits=8\n".utf8)))
        #expect(uri.issuer == "Example Co" && uri.account == "alice@example.com")
        #expect(uri.password.digits == 8 && uri.password.period == 30 && uri.password.algorithm == .sha1)
        #expect(try uri.password.code(at: 59).digits == "94287082")   // the secret is RFC 6238's SHA-1 seed

        let bare = try OTPAuthURI(try SecureBytes(Array("otpauth://totp/bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&algorithm=sha256&period=60".utf8)))
        #expect(bare.issuer == "" && bare.account == "bob" && bare.password.algorithm == .sha256 && bare.password.period == 60)
    }

    @Test func badURIsSayWhatIsWrong() throws {
        let cases = [
            ("https://example.com", "otpauth://"),
            ("otpauth://hotp/x?secret=GEZDGNBV&counter=1", "time-based"),
            ("otpauth://totp/x?issuer=Y", "no secret"),
            ("otpauth://totp/x?secret=GEZ1", "not base32"),
            ("otpauth://totp/x?secret=GEZDGNBV&algorithm=MD5", "unknown algorithm"),
            ("otpauth://totp/x?secret=GEZDGNBV&digits=nine", "not a number"),
            ("otpauth://totp/x?secret=GEZDGNBV&digits=10", "6 to 8 digits"),
        ]
        for (text, expected) in cases {
            do {
                _ = try OTPAuthURI(try SecureBytes(Array(text.utf8)))
                Issue.record("\(text) was accepted")
            } catch {
                #expect("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }
}
