import SystemKit

/// Unbuffered output straight to the file descriptors (so that secret bytes never sit in a
/// stdio buffer, and ordinary text and secret output cannot be reordered). Write errors are
/// ignored: there is nowhere left to report them.
enum Output {
    static func write(_ bytes: [UInt8], to descriptor: FileDescriptor = .standardOutput) {
        try? descriptor.writeAll(bytes)
    }

    /// A line on stdout.
    static func line(_ text: String) {
        write(Array((text + "\n").utf8))
    }

    /// A `coffer: ` line on stderr (notes and errors).
    static func note(_ text: String) {
        write(Array("coffer: \(text)\n".utf8), to: .standardError)
    }
}

/// Whether `bytes` are well-formed UTF-8 (checked without making a String of them).
func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    while true {
        switch parser.parseScalar(from: &iterator) {
        case .valid: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}

/// Builders that append to a byte buffer the caller reserved and wipes.
enum Encode {
    /// Appends `bytes` (well-formed UTF-8) as a JSON string literal.
    static func jsonString(_ bytes: [UInt8], to out: inout [UInt8]) {
        JSONString.append(bytes, to: &out)
    }

    static func jsonString(_ text: String, to out: inout [UInt8]) {
        jsonString(Array(text.utf8), to: &out)
    }

    /// Appends `bytes` (well-formed UTF-8) for display on a terminal: control characters and
    /// backslashes escaped, so that stored text cannot drive the terminal.
    static func display(_ bytes: [UInt8], to out: inout [UInt8]) {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: Array("\\x".utf8))
                out.append(Hex.digit(byte >> 4))
                out.append(Hex.digit(byte & 0xF))
            case 0xC2 where index < bytes.count && (0x80...0x9F).contains(bytes[index]):
                // A C1 control character (U+0080...U+009F).
                out.append(contentsOf: Array("\\u{".utf8))
                out.append(Hex.digit(bytes[index] >> 4))
                out.append(Hex.digit(bytes[index] & 0xF))
                out.append(UInt8(ascii: "}"))
                index += 1
            default: out.append(byte)
            }
        }
    }

    static func display(_ text: String) -> String {
        // Most text has nothing to escape: no control character, backslash, C1 control (after
        // 0xC2) or bidirectional override (after 0xE2).
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") || $0 == 0xC2 || $0 == 0xE2 }) {
            return text
        }
        var out: [UInt8] = []
        // Bidirectional overrides could make displayed text lie about its order.
        var filtered = ""
        for scalar in text.unicodeScalars {
            if (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value) {
                filtered += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                filtered.unicodeScalars.append(scalar)
            }
        }
        display(Array(filtered.utf8), to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the standard base64 encoding of `bytes`.
    static func base64(_ bytes: [UInt8], to out: inout [UInt8]) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
    }
}
