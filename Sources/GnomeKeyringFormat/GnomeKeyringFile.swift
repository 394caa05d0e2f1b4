import CofferCrypto

/// Reads a gnome-keyring keyring file in either of its formats.
public enum GnomeKeyringFile {
    /// Whether `bytes` are an encrypted (binary) keyring, which needs its password to read.
    public static func isEncrypted(_ bytes: [UInt8]) -> Bool { BinaryKeyringReader.looksBinary(bytes) }

    /// The keyring's label, without its password (from the binary header, or the text file).
    public static func label(_ bytes: [UInt8]) throws(GnomeKeyringFileError) -> String {
        if isEncrypted(bytes) { return try BinaryKeyringReader.header(bytes).label }
        return try TextKeyringReader.read(bytes).label
    }

    /// The keyring in `bytes`. An encrypted one needs `password` (`passwordNeeded` without it,
    /// `wrongPassword` when it does not fit); a text one needs none.
    public static func read(_ bytes: [UInt8], password: SecureBytes?) throws(GnomeKeyringFileError) -> GnomeKeyring {
        guard isEncrypted(bytes) else { return try TextKeyringReader.read(bytes) }
        guard let password else { throw .passwordNeeded }
        return try BinaryKeyringReader.read(bytes, password: password)
    }

    /// `keyring` in gnome-keyring's encrypted binary format, protected by `password`: a file
    /// gnome-keyring opens (put it in `~/.local/share/keyrings/<name>.keyring`).
    public static func write(_ keyring: GnomeKeyring, password: SecureBytes) throws -> [UInt8] {
        try BinaryKeyringWriter.write(keyring, password: password)
    }
}
