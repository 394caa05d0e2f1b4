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
        appendContents(bytes, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `bytes` escaped as the inside of a JSON string literal, without the quotes (for
    /// a literal put together from several pieces).
    @inlinable
    public static func appendContents(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            // Runs that need no escape are copied whole.
            var start = 0
            for index in buffer.indices where needsEscape(buffer[index]) {
                out.append(contentsOf: buffer[start..<index])
                appendEscape(buffer[index], to: &out)
                start = index + 1
            }
            out.append(contentsOf: buffer[start...])
        }
        if done == nil {
            for byte in bytes {
                if needsEscape(byte) { appendEscape(byte, to: &out) } else { out.append(byte) }
            }
        }
    }

    @inlinable
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The escape of one byte for which `needsEscape` is true.
    @usableFromInline
    static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(Hex.digit(byte >> 4))
            out.append(Hex.digit(byte & 0xF))
        }
    }
}
