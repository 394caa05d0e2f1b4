/// The id of a collection: 1 to 64 characters from `[A-Za-z0-9_]`, so it is at once a file name
/// and a D-Bus object path element.
public struct CollectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Fails unless `rawValue` is 1...64 characters of `[A-Za-z0-9_]`.
    public init?(_ rawValue: String) {
        guard (1...64).contains(rawValue.utf8.count),
              rawValue.utf8.allSatisfy(CollectionID.isAllowed) else { return nil }
        self.rawValue = rawValue
    }

    /// What `init?` accepts, in words: every message about an id that breaks the rule says it.
    public static let rule = "1 to 64 characters of A-Z, a-z, 0-9 and _ (case matters: 'Work' and 'work' are two ids)"

    /// Derives an id from a display label, as gnome-keyring does: ASCII letters (case kept) and
    /// digits are kept, everything else becomes `_`, and the first 64 are used; `taken` ids get
    /// a `_2`, `_3`, ... suffix (the base shortened to make room). So a label that is itself a
    /// valid id not taken yet gives exactly that id, which lets a client of the Secret Service
    /// (whose CreateCollection takes only a label) create any id.
    public static func derived(fromLabel label: String, avoiding taken: Set<CollectionID>) -> CollectionID {
        var base = String(label.unicodeScalars.prefix(64).map { scalar -> Character in
            scalar.isASCII && isAllowed(UInt8(scalar.value)) ? Character(scalar) : "_"
        })
        if base.isEmpty { base = "unnamed" }
        var candidate = CollectionID(base)!
        var suffix = 2
        while taken.contains(candidate) {
            let ending = "_\(suffix)"
            candidate = CollectionID(base.prefix(64 - ending.count) + ending)!
            suffix += 1
        }
        return candidate
    }

    public static func < (a: CollectionID, b: CollectionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// The collection the `default` alias names when nothing else was set.
    public static let login = CollectionID("login")!
    /// The in-memory collection that is never written to disk.
    public static let session = CollectionID("session")!
}

/// An item's id, unique and never reused within its collection (a decimal path element on D-Bus).
public typealias ItemID = UInt64

/// Where an item lives: its collection and its id there.
public struct ItemReference: Hashable, Sendable, CustomStringConvertible {
    public let collection: CollectionID
    public let item: ItemID
    public init(collection: CollectionID, item: ItemID) {
        self.collection = collection
        self.item = item
    }
    public var description: String { "\(collection)/\(item)" }
}

extension Array where Element == ItemReference {
    /// The positions of these references, grouped by collection; collections in the order they
    /// first appear, positions ascending. A run of references to one collection is grouped
    /// without hashing its id again, so the usual request (all in one collection) costs one
    /// hash, not one per item.
    public func positionsByCollection() -> [(collection: CollectionID, positions: [Int])] {
        var groups: [(collection: CollectionID, positions: [Int])] = []
        var groupOf: [CollectionID: Int] = [:]
        var current = -1
        for position in indices {
            let id = self[position].collection
            if current < 0 || groups[current].collection != id {
                if let known = groupOf[id] {
                    current = known
                } else {
                    current = groups.count
                    groupOf[id] = current
                    groups.append((id, []))
                }
            }
            groups[current].positions.append(position)
        }
        return groups
    }
}
