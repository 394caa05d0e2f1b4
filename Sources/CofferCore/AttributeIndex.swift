/// An inverted index from attribute terms to item ids, generic over the term type: plain
/// `(name, value)` pairs for the in-memory collection, keyed hashes for the encrypted store.
///
/// A search intersects posting sets starting with the smallest, so its cost grows with the
/// size of the rarest term's posting set, not with the number of items.
///
/// Its methods are inlinable so that the store gets code specialized for its term type.
public struct AttributeIndex<Term: Hashable & Sendable>: Sendable {
    /// The items carrying one term. Most terms (an account name, a URL) belong to one item, so
    /// that case needs no set of its own.
    @usableFromInline enum Posting: Sendable {
        /// Only while being filled in place (see `insert`); never stored.
        case none
        case one(ItemID)
        case many(Set<ItemID>)

        @inlinable var count: Int {
            switch self {
            case .none: 0
            case .one: 1
            case .many(let set): set.count
            }
        }

        @inlinable var items: [ItemID] {
            switch self {
            case .none: []
            case .one(let item): [item]
            case .many(let set): Array(set)
            }
        }

        /// Adds `item` in place (the set is never copied).
        @inlinable mutating func insert(_ item: ItemID) {
            switch self {
            case .none:
                self = .one(item)
            case .one(let other):
                self = .many([other, item])
            case .many(var set):
                self = .one(0)  // release our reference so that `set` is unique
                set.insert(item)
                self = .many(set)
            }
        }

        /// Removes `item` in place; returns false when nothing is left.
        @inlinable mutating func remove(_ item: ItemID) -> Bool {
            switch self {
            case .none:
                return false
            case .one(let other):
                return other != item
            case .many(var set):
                self = .one(0)
                set.remove(item)
                self = set.count == 1 ? .one(set.first!) : .many(set)
                return !set.isEmpty
            }
        }
    }

    @usableFromInline var postings: [Term: Posting] = [:]
    /// Each item's terms: a handful, so an array beats a set for both memory and lookups.
    @usableFromInline var termsByItem: [ItemID: [Term]] = [:]

    @inlinable public init(expectedItems: Int = 0) {
        termsByItem.reserveCapacity(expectedItems)
        postings.reserveCapacity(expectedItems)
    }

    @inlinable public var count: Int { termsByItem.count }

    @inlinable public func contains(_ item: ItemID) -> Bool { termsByItem[item] != nil }

    /// Adds `item` with `terms` (distinct), replacing what it had.
    @inlinable public mutating func insert(_ item: ItemID, terms: [Term]) {
        if let old = termsByItem.updateValue(terms, forKey: item) { unlink(item, from: old) }
        for term in terms { postings[term, default: .none].insert(item) }
    }

    @inlinable public mutating func remove(_ item: ItemID) {
        guard let old = termsByItem.removeValue(forKey: item) else { return }
        unlink(item, from: old)
    }

    @inlinable public mutating func removeAll() {
        postings = [:]
        termsByItem = [:]
    }

    @inlinable mutating func unlink(_ item: ItemID, from terms: [Term]) {
        for term in terms where postings[term]?.remove(item) == false {
            postings[term] = nil
        }
    }

    /// Items carrying every term, ascending by id; `.one` returns the lowest such id.
    @inlinable public func items(matchingAll terms: Set<Term>, limit: MatchLimit) -> [ItemID] {
        if terms.isEmpty {
            return Self.limited(termsByItem.keys, limit)
        }
        var smallest: Posting?
        for term in terms {
            guard let posting = postings[term] else { return [] }
            if smallest == nil || posting.count < smallest!.count { smallest = posting }
        }
        let candidates = smallest!.items.lazy.filter { item in
            let have = termsByItem[item]!
            return terms.allSatisfy { have.contains($0) }
        }
        return Self.limited(candidates, limit)
    }

    /// Items whose terms equal `terms` exactly, ascending by id.
    @inlinable public func items(withExactly terms: Set<Term>) -> [ItemID] {
        items(matchingAll: terms, limit: .all).filter { termsByItem[$0]!.count == terms.count }
    }

    @usableFromInline static func limited(_ ids: some Sequence<ItemID>, _ limit: MatchLimit) -> [ItemID] {
        switch limit {
        case .all: ids.sorted()
        case .one: ids.min().map { [$0] } ?? []
        }
    }
}
