/// RFC 4648 base32 (A–Z, 2–7), as authenticator apps write one-time-password secrets: letters
/// of either case, spaces and `-` between groups, and `=` padding at the end are accepted.
/// Decoded a byte at a time into `output`, so that a secret can go straight into secure memory.
public enum Base32 {
    /// Why a text is not base32.
    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case invalidCharacter
        case invalidLength

        public var description: String {
            switch self {
            case .invalidCharacter: "it has a character that is not base32 (only A-Z, 2-7, spaces and = are)"
            case .invalidLength: "its length is not that of base32 text"
            }
        }
    }

    public static func decode(_ text: some Collection<UInt8>, into output: (UInt8) throws -> Void) throws {
        var buffer: UInt32 = 0
        var bits = 0
        var symbols = 0
        var paddingSeen = false
        for byte in text {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") { continue }
            if byte == UInt8(ascii: "=") { paddingSeen = true; continue }
            guard !paddingSeen, let value = value(of: byte) else { throw DecodingError.invalidCharacter }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            symbols += 1
            if bits >= 8 {
                bits -= 8
                try output(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // A group of 8 symbols is 5 bytes; 1, 3 or 6 symbols left over carry no whole byte.
        guard ![1, 3, 6].contains(symbols % 8) else { throw DecodingError.invalidLength }
    }

    /// `bytes` as base32 text (A–Z, 2–7, no padding), a symbol at a time into `output`, so
    /// that a key can go straight from secure memory to secure memory.
    public static func encode(_ bytes: some Collection<UInt8>, into output: (UInt8) throws -> Void) rethrows {
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                try output(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { try output(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): byte - UInt8(ascii: "2") + 26
        default: nil
        }
    }
}
