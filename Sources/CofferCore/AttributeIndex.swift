/// An inverted index from attribute terms to item ids, generic over the term type: plain
/// `(name, value)` pairs for the in-memory collection, keyed hashes for the encrypted store.
///
/// A search intersects posting sets starting with the smallest, so its cost grows with the
/// size of the rarest term's posting set, not with the number of items.
public struct AttributeIndex<Term: Hashable & Sendable>: Sendable {
    private var postings: [Term: Set<ItemID>] = [:]
    private var termsByItem: [ItemID: Set<Term>] = [:]

    public init() {}

    public var count: Int { termsByItem.count }
    public var allItems: Dictionary<ItemID, Set<Term>>.Keys { termsByItem.keys }

    public func contains(_ item: ItemID) -> Bool { termsByItem[item] != nil }

    /// Adds `item` with `terms`, replacing what it had.
    public mutating func insert(_ item: ItemID, terms: Set<Term>) {
        remove(item)
        termsByItem[item] = terms
        for term in terms { postings[term, default: []].insert(item) }
    }

    public mutating func remove(_ item: ItemID) {
        guard let old = termsByItem.removeValue(forKey: item) else { return }
        for term in old {
            postings[term]?.remove(item)
            if postings[term]?.isEmpty == true { postings[term] = nil }
        }
    }

    public mutating func removeAll() {
        postings = [:]
        termsByItem = [:]
    }

    /// Items carrying every term, ascending by id; `.one` returns the lowest such id.
    public func items(matchingAll terms: Set<Term>, limit: MatchLimit) -> [ItemID] {
        if terms.isEmpty {
            return Self.limited(termsByItem.keys, limit)
        }
        var smallest: Set<ItemID>?
        for term in terms {
            guard let posting = postings[term] else { return [] }
            if smallest == nil || posting.count < smallest!.count { smallest = posting }
        }
        let candidates = smallest!.lazy.filter { termsByItem[$0]!.isSuperset(of: terms) }
        return Self.limited(candidates, limit)
    }

    /// Items whose terms equal `terms` exactly, ascending by id.
    public func items(withExactly terms: Set<Term>) -> [ItemID] {
        items(matchingAll: terms, limit: .all).filter { termsByItem[$0]!.count == terms.count }
    }

    private static func limited(_ ids: some Sequence<ItemID>, _ limit: MatchLimit) -> [ItemID] {
        switch limit {
        case .all: ids.sorted()
        case .one: ids.min().map { [$0] } ?? []
        }
    }
}
