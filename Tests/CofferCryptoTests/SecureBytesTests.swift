import Testing
import CofferCrypto

struct SecureBytesTests {
    @Test func appendSliceAndLittleEndianRoundTrip() throws {
        let bytes = try SecureBytes(capacity: 2)
        #expect(bytes.isEmpty)
        try bytes.append([1, 2, 3])
        try bytes.append([9, 4, 5, 9][1...2])
        try bytes.append(6)
        try bytes.appendUInt32LE(0xA1B2_C3D4)
        try bytes.appendUInt64LE(0x0102_0304_0506_0708)
        try bytes.append(try SecureBytes([0xEE]))
        #expect(bytes.count == 6 + 4 + 8 + 1)
        #expect(bytes.unprotectedArray(0..<6) == [1, 2, 3, 4, 5, 6])
        #expect(bytes.unprotectedArray(6..<10) == [0xD4, 0xC3, 0xB2, 0xA1])
        let (u32, u64) = try bytes.read { r in
            _ = try r.skip(6)
            return (try r.u32(), try r.u64())
        }
        #expect(u32 == 0xA1B2_C3D4)
        #expect(u64 == 0x0102_0304_0506_0708)
        #expect(bytes[18] == 0xEE)
        let middle = try bytes.slice(2..<5)
        #expect(plain(middle) == [3, 4, 5])
        bytes[0] = 42
        #expect(bytes[0] == 42)
        #expect(middle[0] == 3) // slices are copies
        #expect(throws: CryptoError.self) { try bytes.slice(10..<100) }
    }

    @Test func appendToItself() throws {
        let bytes = try SecureBytes([1, 2])
        try bytes.append(bytes)
        #expect(plain(bytes) == [1, 2, 1, 2])
    }

    @Test func growsAcrossManyReallocations() throws {
        let bytes = try SecureBytes(capacity: 0)
        for i in 0..<5000 { try bytes.append(UInt8(truncatingIfNeeded: i)) }
        #expect(bytes.count == 5000)
        #expect(bytes[4999] == UInt8(truncatingIfNeeded: 4999))
        #expect(bytes[256] == 0)
    }

    @Test func initialisers() throws {
        let zeros = try SecureBytes(count: 5)
        #expect(plain(zeros) == [0, 0, 0, 0, 0])
        #expect(plain(try SecureBytes([7, 8, 9][1...])) == [8, 9])
        #expect(try SecureBytes(count: 0).isEmpty)
    }

    @Test func wipingInitZeroesTheSource() throws {
        var source: [UInt8] = Array("p4ssw0rd".utf8)
        let secure = try SecureBytes(wiping: &source)
        #expect(source == [UInt8](repeating: 0, count: 8))
        #expect(plain(secure) == Array("p4ssw0rd".utf8))
    }

    @Test func constantTimeEquals() throws {
        let a = try SecureBytes([1, 2, 3])
        #expect(a.constantTimeEquals(try SecureBytes([1, 2, 3])))
        #expect(!a.constantTimeEquals(try SecureBytes([1, 2, 4])))
        #expect(!a.constantTimeEquals(try SecureBytes([1, 2])))
        #expect(try SecureBytes(count: 0).constantTimeEquals(try SecureBytes(capacity: 8)))
    }

    @Test func removeAllAndUnprotectedCopy() throws {
        let a = try SecureBytes([5, 6, 7])
        let seen = a.withUnprotectedCopy { $0 }
        #expect(seen == [5, 6, 7])
        a.removeAll()
        #expect(a.isEmpty)
        try a.append([1])
        #expect(plain(a) == [1])
    }

    @Test func randomSources() throws {
        #expect(Random.bytes(32).count == 32)
        #expect(Random.bytes(32) != Random.bytes(32))
        #expect(Random.nonce(12) != Random.nonce(12))
        let key = try Random.secureBytes(32)
        #expect(key.count == 32)
        #expect(!key.constantTimeEquals(try SecureBytes(count: 32)))
    }

    /// The pool does not auto-expand: a request larger than the whole pool fails cleanly.
    @Test func exhaustionIsATypedError() {
        #expect(throws: CryptoError.secureMemoryExhausted(requested: 64 << 20)) {
            try SecureBytes(count: 64 << 20)
        }
    }

    @Test func errorDescriptionsNameTheProblem() {
        #expect(CryptoError.invalidInput("bad padding").description.contains("bad padding"))
        #expect(CryptoError.secureMemoryExhausted(requested: 10).description.contains("10"))
        #expect(CryptoError.library(function: "gcry_x", code: 5, message: "m").description.contains("gcry_x"))
    }
}
