import SystemKit

/// A device taking part in a synced collection: 16 random bytes it chooses when it joins.
/// Ordered by its bytes, which breaks ties between versions made at the same clock reading.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Nil unless `bytes` is 16 bytes long.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// Lower-case hex, as file names and listings show it.
    public var description: String { Hex.encode(bytes) }
}
