import CofferCore
import CofferCrypto

/// A 128-bit keyed hash of one `(name, value)` attribute pair: what the index and the public
/// part of item records hold instead of attribute values.
package struct AttributeTerm: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    static let byteCount = 16

    /// The bits are already uniformly random (a keyed MAC), so half of them is a fine hash.
    package func hash(into hasher: inout Hasher) { hasher.combine(low) }

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads 16 bytes (two little-endian u64) from the start of `bytes`.
    init(_ bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<8 {
            high |= UInt64(bytes[start + i]) << (8 * UInt64(i))
            low |= UInt64(bytes[start + 8 + i]) << (8 * UInt64(i))
        }
        self.high = high
        self.low = low
    }

    func append(to writer: inout ByteWriter) {
        writer.u64(high)
        writer.u64(low)
    }
}

/// Computes `HMAC-SHA256(lookupKey, name || 0x00 || value)` truncated to 128 bits. The lookup
/// key is random per collection, so equal values in two collections hash differently and no
/// table precomputed for one store serves another. Its HMAC handle is for one thread at a
/// time: a collection's hasher is used under the collection's lock.
package final class AttributeHasher: Sendable {
    private let mac: HMAC

    package init(lookupKey: [UInt8]) throws(CofferError) {
        mac = try CofferError.catching { try HMAC(key: lookupKey, secure: false) }
    }

    func term(name: String, value: String) -> AttributeTerm {
        var message = Array(name.utf8)
        message.append(0)
        message.append(contentsOf: value.utf8)
        let code = mac.authenticationCode(for: message)
        return AttributeTerm(code[0..<AttributeTerm.byteCount])
    }

    package func terms(_ attributes: Attributes) -> Set<AttributeTerm> {
        Set(attributes.map { term(name: $0.key, value: $0.value) })
    }

    /// The public part of an item record: its terms, sorted for a stable encoding.
    package static func encode(_ terms: Set<AttributeTerm>) -> [UInt8] {
        var w = ByteWriter(capacity: terms.count * AttributeTerm.byteCount)
        for term in terms.sorted(by: { ($0.high, $0.low) < ($1.high, $1.low) }) { term.append(to: &w) }
        return w.bytes
    }

    /// The terms in a record's public part; nil if it is malformed (or lists a term twice).
    package static func decode(_ bytes: ArraySlice<UInt8>) -> [AttributeTerm]? {
        guard bytes.count % AttributeTerm.byteCount == 0 else { return nil }
        var terms: [AttributeTerm] = []
        terms.reserveCapacity(bytes.count / AttributeTerm.byteCount)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let term = AttributeTerm(bytes[start..<start + AttributeTerm.byteCount])
            // Encoded sorted: a duplicate would sit next to its twin.
            if let last = terms.last, last == term { return nil }
            terms.append(term)
            start += AttributeTerm.byteCount
        }
        return terms
    }
}
