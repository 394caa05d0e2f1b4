internal import SystemKit

extension ObjectPath {
    /// Escapes arbitrary text into exactly one valid path element, the way gnome-keyring does:
    /// bytes in `[A-Za-z0-9]` pass through; every other UTF-8 byte (including `_`) becomes `_`
    /// followed by two lowercase hex digits. `"My Keys"` → `"My_20Keys"`, `"a-b"` → `"a_2db"`.
    /// The empty string becomes `"_"` (which no non-empty input produces), so the mapping is
    /// injective and `unescapeElement` reverses it exactly.
    public static func escapeElement(_ text: String) -> String {
        if isUnescaped(text) { return text }   // the usual case (a decimal item id, `login`): no copy
        if text.isEmpty { return "_" }
        return String(decoding: elementEscaping.encode(text.utf8), as: UTF8.self)
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
        return String(validating: elementEscaping.decode(element.utf8), as: UTF8.self)
    }

    /// `_` and two hex digits for every byte outside `[A-Za-z0-9]`.
    private static let elementEscaping = PercentEncoding(escape: UInt8(ascii: "_"), uppercase: false,
                                                         unreserved: isAlphanumeric)
}
