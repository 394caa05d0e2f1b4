/// JSON string literals: the one encoder. The quote, the backslash and every control character
/// (U+0000...U+001F, U+007F) are escaped; every other byte is copied, so well-formed UTF-8
/// stays UTF-8 and no string can end a line early.
public enum JSONString {
    /// Appends `bytes` (well-formed UTF-8) as a JSON string literal, quotes included. Appends in
    /// place: a buffer the caller reserved large enough (six bytes a byte, plus two) is never
    /// reallocated, so no copy of what it holds is left behind.
    @inlinable
    public static func append(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(Hex.digit(byte >> 4))
                out.append(Hex.digit(byte & 0xF))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
