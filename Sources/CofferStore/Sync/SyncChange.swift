/// Which version of an item a change made: its clock reading and the device that made it.
/// Versions are totally ordered — clock first, then device — so every device picks the same
/// newest version of an item, whatever order the changes reached it in.
public struct ChangeVersion: Hashable, Comparable, Sendable {
    public let timestamp: HLCTimestamp
    public let device: DeviceID

    public init(timestamp: HLCTimestamp, device: DeviceID) {
        self.timestamp = timestamp
        self.device = device
    }

    public static func < (a: ChangeVersion, b: ChangeVersion) -> Bool {
        a.timestamp != b.timestamp ? a.timestamp < b.timestamp : a.device < b.device
    }
}

/// An item's identity across devices: 16 random bytes given when it is created, the same on
/// every device (each device's store numbers its items its own way).
public struct SyncItemID: Hashable, Comparable, Sendable {
    public let bytes: [UInt8]

    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public static func < (a: SyncItemID, b: SyncItemID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}

/// One change of one item, as a device writes it to its own file: the item's new content (an
/// opaque, already sealed payload) or its deletion, the version it makes, and the versions it
/// replaces — those its device had when the change was made. A version some change replaces
/// was seen and superseded on purpose; a version nobody replaces, other than the newest, lost
/// a concurrent edit and is kept for the user to look at.
public struct SyncChange: Hashable, Sendable {
    public enum Content: Hashable, Sendable {
        /// The item as it is now (sealed by the collection's key: nothing here reads it).
        case item([UInt8])
        /// The item was deleted: a tombstone.
        case deleted
    }

    public let item: SyncItemID
    public let version: ChangeVersion
    public let replaces: Set<ChangeVersion>
    public let content: Content

    public init(item: SyncItemID, version: ChangeVersion, replaces: Set<ChangeVersion>, content: Content) {
        self.item = item
        self.version = version
        self.replaces = replaces
        self.content = content
    }
}
