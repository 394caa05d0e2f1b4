import Testing
import CofferCrypto

/// RFC 5869 appendix A, test cases 1-3 (SHA-256).
struct HKDFTests {
    @Test func case1() throws {
        let okm = try HKDF.sha256(inputKeyMaterial: try SecureBytes([UInt8](repeating: 0x0b, count: 22)),
                                  salt: hex("000102030405060708090a0b0c"), info: hex("f0f1f2f3f4f5f6f7f8f9"),
                                  outputLength: 42)
        #expect(hexString(plain(okm)) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func case2() throws {
        let okm = try HKDF.sha256(inputKeyMaterial: try SecureBytes((0x00...0x4f).map { UInt8($0) }),
                                  salt: (0x60...0xaf).map { UInt8($0) }, info: (0xb0...0xff).map { UInt8($0) },
                                  outputLength: 82)
        #expect(hexString(plain(okm)) == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
                + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87")
    }

    @Test func case3EmptySaltAndNilSaltAgree() throws {
        let expected = "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
        let ikm = try SecureBytes([UInt8](repeating: 0x0b, count: 22))
        let empty = try HKDF.sha256(inputKeyMaterial: ikm, salt: [], info: [], outputLength: 42)
        let absent = try HKDF.sha256(inputKeyMaterial: ikm, salt: nil, info: [], outputLength: 42)
        #expect(hexString(plain(empty)) == expected)
        #expect(hexString(plain(absent)) == expected)
    }

    @Test func outputLengthLimits() throws {
        let ikm = try SecureBytes([1])
        #expect(throws: CryptoError.self) { try HKDF.sha256(inputKeyMaterial: ikm, salt: nil, info: [], outputLength: 0) }
        #expect(throws: CryptoError.self) { try HKDF.sha256(inputKeyMaterial: ikm, salt: nil, info: [], outputLength: 255 * 32 + 1) }
        #expect(try HKDF.sha256(inputKeyMaterial: ikm, salt: nil, info: [], outputLength: 255 * 32).count == 255 * 32)
    }
}
