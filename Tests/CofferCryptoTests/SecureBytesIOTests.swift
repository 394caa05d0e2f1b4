import CofferCrypto
import SystemKit
import Testing

/// SecureBytes read from descriptors and decoded from escaped text, all inside secure memory.
struct SecureBytesIOTests {
    @Test func readsToEndOfADescriptorWithinALimit() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        let secret = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try writeEnd.writeAll(secret)
        writeEnd.close()
        let all = try #require(try SecureBytes.read(toEndOf: readEnd, limit: secret.count))
        readEnd.close()
        #expect(plain(all) == secret)

        let (small, writer) = try FileDescriptor.pipe()
        try writer.writeAll(Array("too long".utf8))
        writer.close()
        #expect(try SecureBytes.read(toEndOf: small, limit: 7) == nil)
        small.close()
    }

    @Test func appendsOneReadAndRemovesFromTheFront() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { readEnd.close(); writeEnd.close() }
        try writeEnd.writeAll(Array("line one\nline two\n".utf8))
        let received = try SecureBytes(capacity: 64)
        #expect(try received.append(readingFrom: readEnd, upTo: 5) == 5)
        #expect(try received.append(readingFrom: readEnd, upTo: 64) == 13)
        received.removeFirst(9)
        #expect(plain(received) == Array("line two\n".utf8))
        received.removeFirst(received.count)
        #expect(received.isEmpty)
    }

    @Test func decodesAnEscapedRangeIntoAnotherBuffer() throws {
        let line = try SecureBytes(Array("D p%25ss%0Aword".utf8))
        let pin = try SecureBytes(capacity: 4)
        let assuan = PercentEncoding(uppercase: true) { $0 >= 0x20 && $0 != 0x7F }
        try pin.append(decoding: 2..<line.count, of: line, with: assuan)
        #expect(plain(pin) == Array("p%ss\nword".utf8))
    }
}
