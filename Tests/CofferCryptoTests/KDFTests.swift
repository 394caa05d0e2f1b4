import Testing
@testable import CofferCrypto

struct KDFTests {
    /// RFC 9106 section 5.3 (Argon2id test vector, with secret K and associated data X).
    @Test func argon2idRFC9106Vector() throws {
        let password = try SecureBytes([UInt8](repeating: 0x01, count: 32))
        let secret = try SecureBytes([UInt8](repeating: 0x03, count: 8))
        let tag = try KDF.argon2id(password: password, salt: [UInt8](repeating: 0x02, count: 16),
                                   secret: secret, associatedData: [UInt8](repeating: 0x04, count: 12),
                                   parameters: Argon2Parameters(iterations: 3, memoryKiB: 32, parallelism: 4),
                                   outputLength: 32)
        #expect(hexString(plain(tag)) == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
    }

    @Test func argon2idPublicAPIIsDeterministicAndSaltSensitive() throws {
        let password = try SecureBytes(Array("correct horse".utf8))
        let salt = [UInt8](repeating: 7, count: 16)
        let a = try KDF.argon2id(password: password, salt: salt, parameters: .testing)
        let b = try KDF.argon2id(password: password, salt: salt, parameters: .testing)
        var otherSalt = salt; otherSalt[0] = 8
        let c = try KDF.argon2id(password: password, salt: otherSalt, parameters: .testing)
        let long = try KDF.argon2id(password: password, salt: salt, parameters: .testing, outputLength: 100)
        #expect(a.count == 32)
        #expect(a.constantTimeEquals(b))
        #expect(!a.constantTimeEquals(c))
        #expect(long.count == 100)
        #expect(plain(long).prefix(32) != plain(a)[...]) // output length is an input of H0
    }

    @Test func argon2idParameterValidation() throws {
        let password = try SecureBytes(Array("pw".utf8))
        let salt = [UInt8](repeating: 1, count: 16)
        func rejects(_ p: Argon2Parameters, salt: [UInt8] = salt, out: Int = 32,
                     password: SecureBytes = password) -> Bool {
            do { _ = try KDF.argon2id(password: password, salt: salt, parameters: p, outputLength: out); return false }
            catch CryptoError.invalidInput { return true }
            catch { return false }
        }
        #expect(rejects(Argon2Parameters(iterations: 0, memoryKiB: 64, parallelism: 1)))
        #expect(rejects(Argon2Parameters(iterations: 1, memoryKiB: 15, parallelism: 2)))
        #expect(rejects(Argon2Parameters(iterations: 1, memoryKiB: 1024, parallelism: 0)))
        #expect(rejects(Argon2Parameters(iterations: 1, memoryKiB: 1024, parallelism: 17)))
        #expect(rejects(.testing, salt: [1, 2, 3, 4, 5, 6, 7]))
        #expect(rejects(.testing, out: 3))
        #expect(rejects(.testing, out: 1025))
        #expect(rejects(.testing, password: try SecureBytes(count: 0)))
        #expect(!rejects(Argon2Parameters(iterations: 1, memoryKiB: 16, parallelism: 2), out: 4))
    }

    @Test func defaultParameters() {
        #expect(Argon2Parameters.default == Argon2Parameters(iterations: 3, memoryKiB: 65536, parallelism: 1))
        #expect(Argon2Parameters.testing == Argon2Parameters(iterations: 1, memoryKiB: 64, parallelism: 1))
    }
}
