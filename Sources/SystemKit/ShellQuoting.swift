/// Quoting for a POSIX shell, for commands a message suggests the user copy.
public enum ShellQuoting {
    /// `text` as is when it holds only characters a shell takes literally, else in single quotes.
    public static func quoted(_ text: String) -> String {
        let plain = text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                    UInt8(ascii: ":"), UInt8(ascii: ",")].contains(byte)
        }
        if plain && !text.isEmpty { return text }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
