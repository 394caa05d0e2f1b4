import CofferCore

extension Backup.Collection {
    /// Takes `access` — the rules of the collection whose items, in the order of `items`, have
    /// the store's ids `itemIDs` — as the backup keeps them: the policy, and each grant with its
    /// item as a position. Grants that cover nothing any more (their item is gone, or they
    /// expired by `now`) are left out.
    public mutating func keep(_ access: CollectionAccess, itemIDs: [ItemID], now: UInt64) {
        let positions = Dictionary(itemIDs.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        policy = access.policy
        grants = access.grants.compactMap { grant -> Backup.Grant? in
            guard !grant.isExpired(at: now) else { return nil }
            var position: Int?
            if let item = grant.item {
                guard let found = positions[item] else { return nil }
                position = found
            }
            return grant.naming(position)
        }
    }

    /// The grants to give on restoring, re-pointed at the new ids: `restoredIDs[position]` is
    /// the id the item at that position of `items` got (nil: it was not restored, being there
    /// already). A grant for an item not restored is left out. A grant for the whole
    /// collection stays one when the collection is new (`intoNewCollection`); merged into an
    /// existing collection it becomes one grant per restored item, so that a backup never
    /// opens up the items the collection had before.
    public func restoredGrants(itemIDs restoredIDs: [ItemID?], intoNewCollection: Bool) -> [AccessGrant] {
        func restored(_ grant: Backup.Grant, item: ItemID?) -> AccessGrant { grant.naming(item) }
        return grants.flatMap { grant -> [AccessGrant] in
            if let position = grant.item {
                guard restoredIDs.indices.contains(position), let id = restoredIDs[position] else { return [] }
                return [restored(grant, item: id)]
            }
            return intoNewCollection ? [restored(grant, item: nil)] : restoredIDs.compactMap { $0 }.map { restored(grant, item: $0) }
        }
    }
}
