import SystemKit

/// Assuan percent-escaping: what goes into command arguments and comes back in `D` lines.
enum PinentryEscaping {
    /// `%` and control characters (CR, LF, ..., DEL) as `%XX`.
    static let assuan = PercentEncoding(uppercase: true) { $0 >= 0x20 && $0 != 0x7F }

    /// `text` escaped, in at most `room` bytes: a longer text is cut at a character boundary
    /// and ends with "…".
    static func escapedLine(_ text: String, room: Int) -> String {
        let whole = assuan.encode(text.utf8)
        if whole.count <= room { return String(decoding: whole, as: UTF8.self) }
        let ellipsis = Array("…".utf8)
        var result: [UInt8] = []
        for character in text {
            let piece = assuan.encode(character.utf8)
            if result.count + piece.count + ellipsis.count > room { break }
            result += piece
        }
        // No dangling blank before the ellipsis.
        while let last = result.last, last == 0x20 { result.removeLast() }
        if result.count + ellipsis.count <= room { result += ellipsis }
        return String(decoding: result, as: UTF8.self)
    }

    /// Percent-decodes non-secret text (ERR messages), repairing invalid UTF-8.
    static func percentDecodedText<S: StringProtocol>(_ text: S) -> String {
        String(decoding: assuan.decode(Array(text.utf8)), as: UTF8.self)
    }
}
