extension ObjectPath {
    /// Escapes arbitrary text into exactly one valid path element, the way gnome-keyring does:
    /// bytes in `[A-Za-z0-9]` pass through; every other UTF-8 byte (including `_`) becomes `_`
    /// followed by two lowercase hex digits. `"My Keys"` → `"My_20Keys"`, `"a-b"` → `"a_2db"`.
    /// The empty string becomes `"_"` (which no non-empty input produces), so the mapping is
    /// injective and `unescapeElement` reverses it exactly.
    public static func escapeElement(_ text: String) -> String {
        if text.isEmpty { return "_" }
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            if isAlphanumeric(b) {
                out.append(b)
            } else {
                out.append(UInt8(ascii: "_"))
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `escapeElement` returns `text` unchanged: it is not empty and all `[A-Za-z0-9]`.
    public static func isUnescaped(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isAlphanumeric)
    }

    /// Reverses `escapeElement`: `_` followed by two hex digits (either case) becomes that byte,
    /// any other character is kept; `"_"` alone decodes to the empty string. Returns nil if the
    /// decoded bytes are not valid UTF-8.
    public static func unescapeElement(_ element: String) -> String? {
        if element == "_" { return "" }
        let bytes = Array(element.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "_"), i + 2 < bytes.count,
               let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x61...0x66: return b - 0x61 + 10
        case 0x41...0x46: return b - 0x41 + 10
        default: return nil
        }
    }
}
