/// Reads the bytes of a `SecureBytes` front to back where they lie, for parsers of decrypted
/// records: each read is checked against the end and throws `Overrun` past it, and nothing is
/// copied out but the strings asked for. Made by `SecureBytes.read(_:)`, valid only inside it.
public struct SecureBytesReader: ~Copyable {
    /// A read past the end of the bytes.
    public struct Overrun: Error {}

    private let bytes: UnsafeRawBufferPointer
    /// Where the next read starts.
    public private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// Skips the next `count` bytes and returns where they are.
    public mutating func skip(_ count: Int) throws(Overrun) -> Range<Int> {
        guard count >= 0, count <= bytes.count - offset else { throw Overrun() }
        defer { offset += count }
        return offset..<offset + count
    }

    /// The next byte.
    public mutating func u8() throws(Overrun) -> UInt8 {
        bytes[try skip(1).lowerBound]
    }

    /// The next 4 bytes as a little-endian integer.
    public mutating func u32() throws(Overrun) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try skip(4).lowerBound, as: UInt32.self))
    }

    /// The next 8 bytes as a little-endian integer.
    public mutating func u64() throws(Overrun) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: try skip(8).lowerBound, as: UInt64.self))
    }

    /// The next `count` bytes, copied into a secure buffer of their own (a secret inside a
    /// decrypted record). Throws `Overrun`, or `CryptoError` when secure memory runs out.
    public mutating func secureBytes(_ count: Int) throws -> SecureBytes {
        let range = try skip(count)
        let copy = try SecureBytes(capacity: count)
        try copy.append(UnsafeRawBufferPointer(rebasing: bytes[range]))
        return copy
    }

    /// The next `count` bytes in an ordinary array: explicit declassification, as
    /// `SecureBytes.unprotectedArray` (digests, text to validate; never secrets).
    public mutating func unprotectedBytes(_ count: Int) throws(Overrun) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: bytes[try skip(count)]))
    }

    /// The next `count` bytes as a string: explicit declassification, as
    /// `SecureBytes.unprotectedString` (labels, attribute names and values, never secrets).
    public mutating func string(_ count: Int) throws(Overrun) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[try skip(count)]), as: UTF8.self)
    }
}

extension SecureBytes {
    /// Runs `body` with a reader over these bytes (they must not change meanwhile).
    public func read<R>(_ body: (inout SecureBytesReader) throws -> R) rethrows -> R {
        var reader = SecureBytesReader(UnsafeRawBufferPointer(start: storage, count: count))
        return try body(&reader)
    }
}
