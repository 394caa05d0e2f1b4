import CofferCore
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
