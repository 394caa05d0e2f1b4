import CofferCrypto

/// Assuan percent-escaping: what goes into command arguments and comes back in `D` lines.
enum PinentryEscaping {
    /// `text` with `%`, and control characters (CR, LF, ...) as `%XX`, in at most `room` bytes:
    /// a longer text is cut at a character boundary and ends with "…".
    static func escapedLine(_ text: String, room: Int) -> String {
        let whole = escape(text.utf8)
        if whole.count <= room { return String(decoding: whole, as: UTF8.self) }
        let ellipsis = Array("…".utf8)
        var result: [UInt8] = []
        for character in text {
            let piece = escape(character.utf8)
            if result.count + piece.count + ellipsis.count > room { break }
            result += piece
        }
        // No dangling blank before the ellipsis.
        while let last = result.last, last == 0x20 { result.removeLast() }
        if result.count + ellipsis.count <= room { result += ellipsis }
        return String(decoding: result, as: UTF8.self)
    }

    private static func escape<S: Sequence>(_ bytes: S) -> [UInt8] where S.Element == UInt8 {
        var out: [UInt8] = []
        for byte in bytes {
            if byte == 0x25 || byte < 0x20 || byte == 0x7F {
                out += [0x25, hexDigit(byte >> 4), hexDigit(byte & 0x0F)]
            } else {
                out.append(byte)
            }
        }
        return out
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x41 + nibble - 10
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// Appends the percent-decoded `data` to `output` byte by byte, with no intermediate copy.
    /// A `%` not followed by two hex digits is kept as it is.
    static func percentDecode(_ data: UnsafeBufferPointer<UInt8>, into output: SecureBytes) throws {
        var i = 0
        while i < data.count {
            let byte = data[i]
            if byte == 0x25, i + 2 < data.count, let high = hexValue(data[i + 1]), let low = hexValue(data[i + 2]) {
                try output.append(high << 4 | low)
                i += 3
            } else {
                try output.append(byte)
                i += 1
            }
        }
    }

    /// Percent-decodes non-secret text (ERR messages), repairing invalid UTF-8.
    static func percentDecodedText<S: StringProtocol>(_ text: S) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
