/// Hexadecimal digits: the one hex encoder and decoder.
public enum Hex {
    /// The ASCII digit for `nibble` (0...15).
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
    }

    /// The value of the ASCII hex digit `digit` (either case), or nil if it is none.
    public static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `bytes` as hex digits, two a byte.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        var digits: [UInt8] = []
        for byte in bytes {
            digits.append(digit(byte >> 4, uppercase: uppercase))
            digits.append(digit(byte & 0x0F, uppercase: uppercase))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The bytes `text` spells in hex digits (either case; white space between them is ignored,
    /// so that long values can be written over several lines), or nil if it holds anything
    /// else or an odd number of digits.
    public static func decode(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 where ![0x20, 0x09, 0x0A, 0x0D].contains(character) {
            guard let nibble = value(of: character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }
}
