@testable import CofferCore
import Testing

@Suite struct AttributeIndexTests {
    @Test func intersectsStartingFromTheRarestTerm() {
        var index = AttributeIndex<String>()
        for id in 1...1000 as ClosedRange<ItemID> { index.insert(id, terms: ["service=x", "account=\(id)"]) }
        #expect(index.items(matchingAll: ["service=x", "account=500"], limit: .all) == [500])
        #expect(index.items(matchingAll: ["service=x"], limit: .one) == [1])
        #expect(index.items(matchingAll: ["service=y"], limit: .all).isEmpty)
        #expect(index.items(matchingAll: [], limit: .all).count == 1000)
    }

    @Test func exactMatchNeedsTheSameTermSet() {
        var index = AttributeIndex<String>()
        index.insert(1, terms: ["a", "b"])
        index.insert(2, terms: ["a"])
        #expect(index.items(withExactly: ["a"]) == [2])
        #expect(index.items(withExactly: ["a", "b"]) == [1])
        index.remove(2)
        #expect(index.items(withExactly: ["a"]).isEmpty)
        #expect(index.items(matchingAll: ["a"], limit: .all) == [1])
        index.insert(1, terms: ["c"])
        #expect(index.items(matchingAll: ["a"], limit: .all).isEmpty)
    }
}

@Suite struct AttributeIndexChurnTests {
    /// Re-inserting and removing items over and over leaves every search exact: no repeats,
    /// no removed items, no item missing; and stale entries are reclaimed.
    @Test func churnKeepsResultsExact() {
        var index = AttributeIndex<String>()
        var model: [ItemID: Set<String>] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5_000 {
            let item = ItemID(Int.random(in: 1...200, using: &generator))
            if step % 7 == 0 {
                index.remove(item)
                model[item] = nil
            } else {
                let terms: Set<String> = ["shared", "group=\(item % 5)", "round=\(step % 3)"]
                index.insert(item, terms: Array(terms))
                model[item] = terms
            }
        }
        for query: Set<String> in [["shared"], ["group=1"], ["shared", "round=2"], ["group=3", "round=0"], ["nothing"]] {
            let expected = model.filter { query.isSubset(of: $0.value) }.keys.sorted()
            #expect(index.items(matchingAll: query, limit: .all) == expected, "\(query)")
            #expect(index.items(matchingAll: query, limit: .one) == Array(expected.prefix(1)))
        }
        // The shared posting holds live items only (or twice that at most, before a filter).
        #expect(index.postings["shared"]!.items.count <= 2 * model.count + 1)
    }
}
