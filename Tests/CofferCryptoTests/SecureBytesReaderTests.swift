import CofferCrypto
import Testing

/// `SecureBytes.read`: fields read in place, every read checked against the end.
struct SecureBytesReaderTests {
    @Test func readsFieldsInOrderAndStopsAtTheEnd() throws {
        let bytes = try SecureBytes([0x01, 0x02, 0x03, 0x04] + [8, 7, 6, 5, 4, 3, 2, 1] + Array("héllo".utf8) + [0xFE, 0xFF])
        let (u32, u64, text, byte, endedEarly, last, ended, empty) = try bytes.read { r in
            (try r.u32(), try r.u64(), try r.string(6), try r.u8(), r.isAtEnd, try r.skip(1), r.isAtEnd, try r.skip(0))
        }
        #expect(u32 == 0x0403_0201)
        #expect(u64 == 0x0102_0304_0506_0708)
        #expect(text == "héllo")
        #expect(byte == 0xFE)
        #expect(!endedEarly)
        #expect(last == 19..<20)
        #expect(ended)
        #expect(empty == 20..<20)
    }

    /// A read past the end, or of a negative length, throws and reads nothing: the reader
    /// stays where it was.
    @Test func aReadPastTheEndThrowsAndMovesNothing() throws {
        let bytes = try SecureBytes([1, 2, 3, 4, 5, 6])
        let (overruns, offset, rest) = try bytes.read { r in
            _ = try r.skip(3)
            var overruns = 0
            do { _ = try r.u32() } catch { overruns += 1 }
            do { _ = try r.u64() } catch { overruns += 1 }
            do { _ = try r.string(4) } catch { overruns += 1 }
            do { _ = try r.skip(-1) } catch { overruns += 1 }
            do { _ = try r.skip(Int.max) } catch { overruns += 1 }
            return (overruns, r.offset, try r.string(3))
        }
        #expect(overruns == 5)
        #expect(offset == 3)
        #expect(rest == "\u{4}\u{5}\u{6}")
    }

    /// The last byte can be read as a byte; after it, a byte read throws and moves nothing.
    @Test func aByteReadAtTheEndThrows() throws {
        let bytes = try SecureBytes([7, 9])
        let (first, second, overran, offset) = try bytes.read { r in
            let first = try r.u8(), second = try r.u8()
            var overran = false
            do { _ = try r.u8() } catch { overran = true }
            return (first, second, overran, r.offset)
        }
        #expect([first, second] == [7, 9])
        #expect(overran)
        #expect(offset == 2)
    }

    /// Copies out: a secret into secure memory of its own, other bytes into an array; each
    /// checked against the end like every read.
    @Test func bytesAreCopiedOutAndOverrunsThrow() throws {
        let bytes = try SecureBytes([1, 2, 3, 4, 5])
        let (secret, plain, overruns, offset) = try bytes.read { r in
            let secret = try r.secureBytes(2), plain = try r.unprotectedBytes(2)
            var overruns = 0
            do { _ = try r.secureBytes(2) } catch is SecureBytesReader.Overrun { overruns += 1 }
            do { _ = try r.unprotectedBytes(2) } catch { overruns += 1 }
            return (secret, plain, overruns, r.offset)
        }
        bytes[0] = 9
        #expect(secret.unprotectedArray(0..<secret.count) == [1, 2])
        #expect(plain == [3, 4])
        #expect(overruns == 2)
        #expect(offset == 4)
    }
}
