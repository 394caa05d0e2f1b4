import CofferCrypto

/// Reads gnome-keyring's big-endian encodings (§12.1 of the spec digest) from ordinary bytes
/// (a file's clear part) or secure bytes (its decrypted part): u32, 64-bit times as two u32,
/// and length-prefixed strings and byte strings (`0xffffffff` for none).
struct ByteReader {
    private let plain: [UInt8]?
    private let secure: SecureBytes?
    private(set) var offset: Int
    /// What is being read, for error messages ("the header", "item 3").
    var context = "the header"

    init(_ bytes: [UInt8], offset: Int = 0) {
        plain = bytes
        secure = nil
        self.offset = offset
    }

    init(_ bytes: SecureBytes, offset: Int = 0) {
        plain = nil
        secure = bytes
        self.offset = offset
    }

    var count: Int { plain?.count ?? secure!.count }
    var remaining: Int { count - offset }

    private func byte(_ index: Int) -> UInt8 { plain?[index] ?? secure![index] }

    private mutating func need(_ n: Int, _ what: String) throws(GnomeKeyringFileError) {
        guard n >= 0, n <= remaining else {
            throw .damaged("it ends inside \(what) of \(context) (at byte \(offset))")
        }
    }

    mutating func skip(_ n: Int, _ what: String) throws(GnomeKeyringFileError) {
        try need(n, what)
        offset += n
    }

    mutating func uint8(_ what: String) throws(GnomeKeyringFileError) -> UInt8 {
        try need(1, what)
        defer { offset += 1 }
        return byte(offset)
    }

    mutating func uint32(_ what: String) throws(GnomeKeyringFileError) -> UInt32 {
        try need(4, what)
        defer { offset += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(byte(offset + $1)) }
    }

    mutating func time(_ what: String) throws(GnomeKeyringFileError) -> UInt64 {
        let high = try uint32(what)
        return UInt64(high) << 32 | UInt64(try uint32(what))
    }

    /// Ordinary bytes (not secret).
    mutating func bytes(_ n: Int, _ what: String) throws(GnomeKeyringFileError) -> [UInt8] {
        try need(n, what)
        defer { offset += n }
        if let plain { return Array(plain[offset..<offset + n]) }
        return secure!.unprotectedArray(offset..<offset + n)
    }

    /// The length of a string or byte string; nil for "none".
    private mutating func length(_ what: String) throws(GnomeKeyringFileError) -> Int? {
        let length = try uint32(what)
        if length == 0xFFFF_FFFF { return nil }
        guard length < 0x7FFF_FFFF else { throw .damaged("\(what) of \(context) has an impossible length") }
        try need(Int(length), what)
        return Int(length)
    }

    /// A string: UTF-8 without NUL; nil when the file says none.
    mutating func string(_ what: String) throws(GnomeKeyringFileError) -> String? {
        guard let n = try length(what) else { return nil }
        let raw = try bytes(n, what)
        guard !raw.contains(0), let text = String(validating: raw, as: UTF8.self) else {
            throw .damaged("\(what) of \(context) is not valid text")
        }
        return text
    }

    /// A byte string holding a secret, copied into secure memory (empty for none).
    mutating func secret(_ what: String) throws(GnomeKeyringFileError) -> SecureBytes {
        do {
            guard let n = try length(what) else { return try SecureBytes(count: 0) }
            if let plain {
                defer { offset += n }
                return try SecureBytes(plain[offset..<offset + n])
            }
            defer { offset += n }
            return try secure!.slice(offset..<offset + n)
        } catch let error as GnomeKeyringFileError {
            throw error
        } catch {
            throw .outOfSecureMemory
        }
    }
}
