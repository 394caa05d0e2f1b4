/// An inverted index from attribute terms to item ids, generic over the term type: plain
/// `(name, value)` pairs for the in-memory collection, keyed hashes for the encrypted store.
///
/// A search scans the smallest posting of its terms and checks each candidate's own terms, so
/// its cost grows with the size of the rarest term's posting, not with the number of items.
/// Postings are append-only lists: adding an item costs no hashing beyond the term lookup;
/// removals only count stale entries, and a list is filtered once half of it is stale, which
/// keeps every change O(1) amortized.
///
/// Its methods are inlinable so that the store gets code specialized for its term type.
public struct AttributeIndex<Term: Hashable & Sendable>: Sendable {
    /// The items carrying one term. Most terms (an account name, a URL) belong to one item, so
    /// that case needs no list of its own.
    @usableFromInline enum Posting: Sendable {
        /// Only while being filled in place (see `insert`); never stored.
        case none
        case one(ItemID)
        /// Ids in insertion order. `stale` counts entries of ids that no longer carry the term
        /// or stand in the list twice; readers check every id against `termsByItem`.
        case list([ItemID], stale: Int)

        /// An upper bound of the number of items.
        @inlinable var count: Int {
            switch self {
            case .none: 0
            case .one: 1
            case .list(let ids, let stale): ids.count - stale
            }
        }

        @inlinable var items: [ItemID] {
            switch self {
            case .none: []
            case .one(let item): [item]
            case .list(let ids, _): ids
            }
        }

        /// Appends `item` in place (the list is never copied).
        @inlinable mutating func insert(_ item: ItemID) {
            switch self {
            case .none:
                self = .one(item)
            case .one(let other):
                self = .list([other, item], stale: 0)
            case .list(var ids, let stale):
                self = .none  // release our reference so that `ids` is unique
                ids.append(item)
                self = .list(ids, stale: stale)
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

    /// Records that `item`'s entries under `terms` went stale (call after `termsByItem` changed).
    @inlinable mutating func unlink(_ item: ItemID, from terms: [Term]) {
        for term in terms {
            switch postings.removeValue(forKey: term) {
            case .one(let other) where other != item:
                postings[term] = .one(other)
            case .list(var ids, var stale):
                stale += 1
                if stale * 2 >= ids.count {
                    var seen = Set<ItemID>()
                    ids = ids.filter { termsByItem[$0]?.contains(term) == true && seen.insert($0).inserted }
                    stale = 0
                }
                if ids.count > 1 {
                    postings[term] = .list(ids, stale: stale)
                } else if let only = ids.first {
                    postings[term] = .one(only)
                }
            default:
                break
            }
        }
    }

    /// Items carrying every term, ascending by id; `.one` returns the lowest such id.
    @inlinable public func items(matchingAll terms: Set<Term>, limit: MatchLimit) -> [ItemID] {
        if terms.isEmpty {
            return Self.limited(Array(termsByItem.keys), limit)
        }
        var smallest: Posting?
        for term in terms {
            guard let posting = postings[term] else { return [] }
            if smallest == nil || posting.count < smallest!.count { smallest = posting }
        }
        var matches: [ItemID] = []
        for item in smallest!.items {
            guard let have = termsByItem[item], terms.allSatisfy({ have.contains($0) }) else { continue }
            matches.append(item)
        }
        return Self.limited(matches, limit)
    }

    /// Items whose terms equal `terms` exactly, ascending by id.
    @inlinable public func items(withExactly terms: Set<Term>) -> [ItemID] {
        items(matchingAll: terms, limit: .all).filter { termsByItem[$0]!.count == terms.count }
    }

    /// Ascending and without repeats (a list may name an item twice).
    @usableFromInline static func limited(_ ids: [ItemID], _ limit: MatchLimit) -> [ItemID] {
        if ids.count < 2 { return ids }   // the usual search: one match
        switch limit {
        case .all:
            var sorted = ids.sorted()
            var last: ItemID?
            sorted.removeAll { id in
                defer { last = id }
                return id == last
            }
            return sorted
        case .one:
            return ids.min().map { [$0] } ?? []
        }
    }
}
