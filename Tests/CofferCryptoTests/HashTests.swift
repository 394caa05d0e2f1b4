import Foundation
import SystemKit
import Testing
import CofferCrypto

struct HashTests {
    /// RFC 4231 test cases 1 and 2.
    @Test func hmacRFC4231() throws {
        #expect(hexString(try HMAC.authenticationCode(key: [UInt8](repeating: 0x0b, count: 20),
                                                            message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(hexString(try HMAC.authenticationCode(key: Array("Jefe".utf8),
                                                            message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hmacHandleIsReusableAndKeyedFromSecureBytes() throws {
        let mac = try HMAC(key: try SecureBytes(Array("Jefe".utf8)))
        let message = Array("what do ya want for nothing?".utf8)
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        #expect(hexString(mac.authenticationCode(for: message)) == expected)
        #expect(hexString(mac.authenticationCode(for: [1, 2, 3])) != expected)
        #expect(hexString(mac.authenticationCode(for: try SecureBytes(message))) == expected)
    }

    @Test func sha256() {
        #expect(hexString(Digest.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hexString(Digest.sha256([]))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func crc32() {
        #expect(Digest.crc32(Array("123456789".utf8)[...]) == 0xCBF43926)
        // 43 bytes: five 8-byte steps and a 3-byte tail.
        #expect(Digest.crc32(Array("The quick brown fox jumps over the lazy dog".utf8)[...]) == 0x414FA339)
        #expect(Digest.crc32(ArraySlice<UInt8>()) == 0)
        let framed = Array("xx123456789".utf8)
        #expect(Digest.crc32(framed[2...]) == 0xCBF43926)
    }
}

/// SHA-256 of a file, read in chunks: the same digest as of its bytes at once.
@Suite struct FileDigestTests {
    @Test func aFileHashesAsItsBytes() throws {
        let path = NSTemporaryDirectory() + "/file-digest-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: path) }
        // More than two chunks and not a whole number of them.
        let bytes = (0..<(200_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        for contents in [[], Array("abc".utf8), bytes] {
            try Data(contents).write(to: URL(fileURLWithPath: path))
            let file = try FileDescriptor.open(path, .readOnly)
            defer { file.close() }
            #expect(try Digest.sha256(readingToEndOf: file) == Digest.sha256(contents))
        }
    }
}
