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

    @Test func writesEveryByteToADescriptor() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { readEnd.close() }
        let secret = try SecureBytes((0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })   // fits the pipe
        try secret.writeAll(to: writeEnd, timeout: .seconds(30))
        writeEnd.close()
        #expect(try SecureBytes.read(toEndOf: readEnd, limit: 100_000) == secret)
    }

    @Test func aClosedReaderIsABrokenPipeAndAFullOneTimesOut() throws {
        let secret = try SecureBytes(Array("key".utf8))
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        readEnd.close()
        #expect(throws: Errno.brokenPipe) { try secret.writeAll(to: writeEnd) }
        writeEnd.close()

        // A reader that never reads: the pipe fills up, and the writer gives up in time.
        let (idle, full) = try FileDescriptor.pipe()
        defer { idle.close(); full.close() }
        try full.setNonBlocking()
        while (try? full.write(ArraySlice(repeating: 0, count: 65536))) != nil {}
        #expect(throws: Errno.timedOut) { try secret.writeAll(to: full, timeout: .milliseconds(50)) }
    }

    @Test func decodesAnEscapedRangeIntoAnotherBuffer() throws {
        let line = try SecureBytes(Array("D p%25ss%0Aword".utf8))
        let pin = try SecureBytes(capacity: 4)
        let assuan = PercentEncoding(uppercase: true) { $0 >= 0x20 && $0 != 0x7F }
        try pin.append(decoding: 2..<line.count, of: line, with: assuan)
        #expect(plain(pin) == Array("p%ss\nword".utf8))
    }
}
