import CofferCore
import CofferCrypto

/// What importing items into one collection does: which are new, and which are there already
/// (an item with exactly the same label, attributes and secret), so that importing the same
/// thing twice adds nothing. Applying it adds the new ones in one atomic commit: after a crash
/// or an error, either all of them are in the collection or none is.
public struct ImportPlan: Sendable {
    public let collection: CollectionID
    /// The items to add.
    public let new: [NewItem]
    /// Where each of `new` is among the items planned (to tell which of them were new).
    public let positions: [Int]
    /// How many items were found in the collection already.
    public let alreadyThere: Int

    /// Plans `items` into `collection`, which does not exist yet: all of them are new.
    public static func intoNewCollection(_ items: [NewItem], _ collection: CollectionID) -> ImportPlan {
        ImportPlan(collection: collection, new: items, positions: Array(items.indices), alreadyThere: 0)
    }

    /// Plans `items` into the unlocked `collection` of `keychain`.
    public static func make(_ items: [NewItem], into collection: CollectionID, of keychain: Keychain) throws -> ImportPlan {
        var new: [NewItem] = []
        var positions: [Int] = []
        var there = 0
        for (position, item) in items.enumerated() {
            if try isThere(item, in: collection, of: keychain) {
                there += 1
            } else {
                new.append(item)
                positions.append(position)
            }
        }
        return ImportPlan(collection: collection, new: new, positions: positions, alreadyThere: there)
    }

    /// Adds the new items; their references, in order.
    @discardableResult
    public func apply(to keychain: Keychain) throws -> [ItemReference] {
        try keychain.insertAll(new, into: collection)
    }

    private static func isThere(_ item: NewItem, in collection: CollectionID, of keychain: Keychain) throws -> Bool {
        let query = Query(attributes: item.attributes, collection: collection, returnAttributes: true, returnSecret: true)
        return try keychain.search(query).contains { match in
            guard let metadata = match.metadata, let secret = match.secret else { return false }
            return metadata.attributes == item.attributes && metadata.label == item.label
                && secret.bytes.constantTimeEquals(item.secret.bytes)
        }
    }
}
