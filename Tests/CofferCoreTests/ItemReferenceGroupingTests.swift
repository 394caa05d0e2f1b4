import CofferCore
import Testing

/// `positionsByCollection`: what batched reads (GetSecrets, access decisions) group by.
@Suite struct ItemReferenceGroupingTests {
    let a = CollectionID("a")!
    let b = CollectionID("b")!
    let c = CollectionID("c")!

    func references(_ pairs: [(CollectionID, ItemID)]) -> [ItemReference] {
        pairs.map { ItemReference(collection: $0.0, item: $0.1) }
    }

    func groups(_ references: [ItemReference]) -> [String] {
        references.positionsByCollection().map { "\($0.collection): \($0.positions.map(String.init).joined(separator: ","))" }
    }

    @Test func nothingMakesNoGroup() {
        #expect(groups([]).isEmpty)
    }

    @Test func oneRunIsOneGroup() {
        #expect(groups(references([(a, 1), (a, 2), (a, 1)])) == ["a: 0,1,2"])
    }

    /// Collections come in the order they first appear; a collection met again after another
    /// joins its first group, positions ascending.
    @Test func interleavedCollectionsJoinTheirFirstGroup() {
        let mixed = references([(b, 1), (a, 1), (b, 2), (c, 9), (a, 2), (a, 3), (b, 1), (c, 9)])
        #expect(groups(mixed) == ["b: 0,2,6", "a: 1,4,5", "c: 3,7"])
    }
}
