/// Bytes escaped as an escape byte and two hex digits (`%2F`): the one such encoder and decoder.
/// Assuan (pinentry) and D-Bus address values escape with `%`, D-Bus object path elements
/// with `_`; each says which bytes stand for themselves.
public struct PercentEncoding: Sendable {
    /// The byte that starts an escape; it is always escaped itself.
    public let escape: UInt8
    /// Whether escapes use upper-case hex digits.
    public let uppercase: Bool
    /// Whether a byte (other than `escape`) stands for itself.
    public let isUnreserved: @Sendable (UInt8) -> Bool

    public init(escape: UInt8 = UInt8(ascii: "%"), uppercase: Bool, unreserved: @escaping @Sendable (UInt8) -> Bool) {
        self.escape = escape
        self.uppercase = uppercase
        self.isUnreserved = unreserved
    }

    /// `bytes`, every byte that does not stand for itself escaped.
    public func encode(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        for byte in bytes {
            if byte != escape && isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [escape, Hex.digit(byte >> 4, uppercase: uppercase), Hex.digit(byte & 0x0F, uppercase: uppercase)]
            }
        }
        return out
    }

    /// Hands each decoded byte of `bytes` to `output`, in order and with no copy in between
    /// (so that a secret can be decoded straight into secure memory). An escape byte and two
    /// hex digits (either case) become that byte; anything else, an escape byte not followed
    /// by two hex digits included, stays as it is.
    public func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, into output: (UInt8) throws -> Void) rethrows {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            guard byte == escape, index != bytes.endIndex, let high = Hex.value(of: bytes[index]) else {
                try output(byte)
                continue
            }
            let second = bytes.index(after: index)
            guard second != bytes.endIndex, let low = Hex.value(of: bytes[second]) else {
                try output(byte)
                continue
            }
            try output(high << 4 | low)
            index = bytes.index(after: second)
        }
    }

    /// `bytes` decoded (see `decode(_:into:)`).
    public func decode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        decode(bytes) { out.append($0) }
        return out
    }
}
