import SystemKit

/// What GLib makes of a key file's values (gnome-keyring writes its unencrypted keyrings with
/// GLib): strings unescape `\s`, `\n`, `\t`, `\r` and `\\`; numbers are decimal.
extension KeyFile {
    /// The value of `key` in `group`, unescaped.
    func string(_ group: String, _ key: String) throws(GnomeKeyringFileError) -> String? {
        guard let raw = untrimmedValue(key, in: group) else { return nil }
        var out = ""
        var escaped = false
        for character in raw {
            if escaped {
                switch character {
                case "s": out.append(" ")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "\\": out.append("\\")
                default: throw .damaged("[\(group)] \(key) has an unknown escape \\\(character)")
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The value of `key` in `group` as an unsigned number (nil when absent).
    func number(_ group: String, _ key: String) throws(GnomeKeyringFileError) -> UInt64? {
        guard let raw = value(key, in: group) else { return nil }
        guard let number = UInt64(raw) else { throw .damaged("[\(group)] \(key) is not a number") }
        return number
    }
}
