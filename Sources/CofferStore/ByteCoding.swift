import CofferCore

/// Appends little-endian integers and length-prefixed fields to a byte array.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { integer(UInt64(v), width: 2) }
    package mutating func u32(_ v: UInt32) { integer(UInt64(v), width: 4) }
    mutating func u64(_ v: UInt64) { integer(v, width: 8) }
    mutating func raw(_ v: some Collection<UInt8>) { bytes.append(contentsOf: v) }
    private mutating func integer(_ v: UInt64, width: Int) {
        for i in 0..<width { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// A u32 length then the bytes.
    mutating func field(_ v: some Collection<UInt8>) {
        u32(UInt32(v.count))
        bytes.append(contentsOf: v)
    }
}

/// Reads what `ByteWriter` wrote, failing with a description instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = end ?? bytes.count
    }

    struct Truncated: Error {}

    var remaining: Int { end - offset }

    mutating func u8() throws(Truncated) -> UInt8 {
        guard remaining >= 1 else { throw Truncated() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(Truncated) -> UInt16 { UInt16(truncatingIfNeeded: try integer(2)) }
    mutating func u32() throws(Truncated) -> UInt32 { UInt32(truncatingIfNeeded: try integer(4)) }
    mutating func u64() throws(Truncated) -> UInt64 { try integer(8) }

    mutating func raw(_ count: Int) throws(Truncated) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw Truncated() }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// A u32 length then that many bytes; returns the range they occupy.
    mutating func fieldRange() throws(Truncated) -> Range<Int> {
        let count = Int(try u32())
        guard remaining >= count else { throw Truncated() }
        defer { offset += count }
        return offset..<offset + count
    }

    private mutating func integer(_ width: Int) throws(Truncated) -> UInt64 {
        guard remaining >= width else { throw Truncated() }
        var value: UInt64 = 0
        for i in 0..<width { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += width
        return value
    }
}
