import SystemKit
import Testing

@Suite struct EscapingTests {
    @Test func hexRoundTripsEveryByte() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.encode([0x00, 0x7F, 0xAB]) == "007fab")
        #expect(Hex.encode([0xAB], uppercase: true) == "AB")
        #expect(Hex.decode(Hex.encode(all)) == all)
        #expect(Hex.decode(Hex.encode(all, uppercase: true)) == all)
    }

    @Test func hexDecodingSkipsWhiteSpaceAndRejectsAnythingElse() {
        #expect(Hex.decode("00 ff\n\tAb\r\n") == [0x00, 0xFF, 0xAB])
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)      // odd
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.value(of: UInt8(ascii: "g")) == nil)
        #expect(Hex.digit(11) == UInt8(ascii: "b") && Hex.digit(11, uppercase: true) == UInt8(ascii: "B"))
    }

    /// The quote, the backslash and the control characters are escaped; anything else (UTF-8
    /// included) is copied, the same whether the bytes are contiguous or not.
    @Test func jsonStringEscapesQuoteBackslashAndControls() {
        let text = "a\"b\\c\nd\re\tf\u{0}\u{1F}\u{7F} é🔑 plain"
        let expected = #""a\"b\\c\nd\re\tf\u0000\u001f\u007f é🔑 plain""#
        var contiguous: [UInt8] = []
        JSONString.append(text.utf8, to: &contiguous)
        #expect(String(decoding: contiguous, as: UTF8.self) == expected)
        var oneByOne: [UInt8] = []
        JSONString.append(text.utf8.lazy.map { $0 }, to: &oneByOne)
        #expect(oneByOne == contiguous)
        var pieces: [UInt8] = Array("[".utf8)
        JSONString.appendContents("x\"".utf8, to: &pieces)
        #expect(pieces == Array(#"[x\""#.utf8))
        var empty: [UInt8] = []
        JSONString.append([UInt8](), to: &empty)
        #expect(empty == [0x22, 0x22])
    }

    @Test func percentEncodingEscapesWhatIsNotUnreservedAndRoundTrips() {
        let assuan = PercentEncoding(uppercase: true) { $0 >= 0x20 && $0 != 0x7F }
        #expect(assuan.encode(Array("a%b\nc\u{7F}".utf8)) == Array("a%25b%0Ac%7F".utf8))
        let path = PercentEncoding(escape: UInt8(ascii: "_"), uppercase: false) {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        }
        #expect(path.encode(Array("My_Keys é".utf8)) == Array("My_5fKeys_20_c3_a9".utf8))
        let all = (0...255).map { UInt8($0) }
        for encoding in [assuan, path] {
            #expect(encoding.decode(encoding.encode(all)) == all)
        }
    }

    @Test func percentDecodingKeepsBrokenEscapesAndReadsEitherCase() {
        let encoding = PercentEncoding(uppercase: true) { _ in true }
        #expect(encoding.decode(Array("%41%4a%4A".utf8)) == Array("AJJ".utf8))
        #expect(encoding.decode(Array("100%".utf8)) == Array("100%".utf8))
        #expect(encoding.decode(Array("%4".utf8)) == Array("%4".utf8))
        #expect(encoding.decode(Array("%4g%%41".utf8)) == Array("%4g%A".utf8))
        // Straight into a caller's storage, from any collection of bytes.
        var sink: [UInt8] = []
        encoding.decode(Array("x%20y".utf8)[1...]) { sink.append($0) }
        #expect(sink == Array(" y".utf8))
    }
}
