import CofferStore
import CofferTestSupport
import Testing

/// The merge of synced changes (issue: secrets on every machine): any order of arrival, any
/// duplicates, any gaps give the same state on every device; the newest version wins, ties
/// broken by device; a version that lost a concurrent edit is kept.
@Suite struct SyncMergeTests {
    static let a = DeviceID(Array(repeating: 0xAA, count: 16))!
    static let b = DeviceID(Array(repeating: 0xBB, count: 16))!
    static let c = DeviceID(Array(repeating: 0xCC, count: 16))!
    static let item = SyncItemID(Array(repeating: 1, count: 16))!

    static func change(_ device: DeviceID, _ ms: UInt64, replaces: [ChangeVersion] = [], _ content: SyncChange.Content) -> SyncChange {
        SyncChange(item: item, version: ChangeVersion(timestamp: HLCTimestamp(milliseconds: ms, counter: 0), device: device),
                   replaces: Set(replaces), content: content)
    }

    @Test func theClockOrdersWhatCameAfterEvenWhenTheWallClockIsBehind() {
        var clock = HybridLogicalClock()
        let first = clock.tick(now: 1000)
        #expect(clock.tick(now: 1000) > first)
        clock.observe(HLCTimestamp(milliseconds: 5000, counter: 7))
        let after = clock.tick(now: 2000)   // this device's clock is behind the one it saw
        #expect(after > HLCTimestamp(milliseconds: 5000, counter: 7))
        #expect(clock.tick(now: 6000) == HLCTimestamp(milliseconds: 6000, counter: 0))
        var saturated = HybridLogicalClock(last: HLCTimestamp(milliseconds: 10, counter: .max))
        #expect(saturated.tick(now: 0) == HLCTimestamp(milliseconds: 11, counter: 0))
    }

    @Test func aSequentialEditSupersedesAConcurrentOneIsKept() {
        let created = Self.change(Self.a, 100, .item([1]))
        let edited = Self.change(Self.b, 200, replaces: [created.version], .item([2]))
        var item = MergedItem(item: Self.item)
        item.merge(created)
        item.merge(edited)
        #expect(item.winner == edited && item.conflicts.isEmpty)

        // A, not having seen B's edit, edits too, later: A wins, B's edit is kept as the loser.
        let concurrent = Self.change(Self.a, 300, replaces: [created.version], .item([3]))
        item.merge(concurrent)
        #expect(item.winner == concurrent)
        #expect(item.conflicts == [edited])
        // Resolving it replaces both heads.
        let resolved = Self.change(Self.c, 400, replaces: Array(item.heads), .item([2]))
        item.merge(resolved)
        #expect(item.winner == resolved && item.conflicts.isEmpty)
    }

    @Test func aTieOfClocksIsBrokenByDeviceAndADeleteIsATombstone() {
        let created = Self.change(Self.a, 100, .item([1]))
        let editA = Self.change(Self.a, 200, replaces: [created.version], .item([2]))
        let deleteB = Self.change(Self.b, 200, replaces: [created.version], .deleted)
        var item = MergedItem(item: Self.item)
        for change in [deleteB, created, editA] { item.merge(change) }
        #expect(item.winner == deleteB && !item.exists)   // BB… > AA…
        #expect(item.conflicts == [editA])                 // the edit that lost is kept
    }

    /// Many random histories of three devices editing and deleting one item, each device
    /// seeing some of the others' changes before it writes; every order of arrival, with
    /// changes repeated, gives the same state.
    @Test(arguments: 0..<40) func everyOrderOfArrivalConverges(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let devices = [Self.a, Self.b, Self.c]
        var clocks = Array(repeating: HybridLogicalClock(), count: 3)
        var seen = Array(repeating: MergedItem(item: Self.item), count: 3)
        var all: [SyncChange] = []
        for step in 0..<30 {
            let writer = Int.random(in: 0..<3, using: &random)
            // The writer first receives some of the changes made so far.
            for change in all where random.chance(0.5) {
                if seen[writer].merge(change) { clocks[writer].observe(change.version.timestamp) }
            }
            let now = UInt64(step * 10) + UInt64.random(in: 0..<25, using: &random)   // clocks disagree
            let version = ChangeVersion(timestamp: clocks[writer].tick(now: now), device: devices[writer])
            let content: SyncChange.Content = random.chance(0.2) ? .deleted : .item([UInt8(step)])
            let change = SyncChange(item: Self.item, version: version, replaces: seen[writer].heads, content: content)
            seen[writer].merge(change)
            all.append(change)
        }
        var reference = MergedItem(item: Self.item)
        for change in all { reference.merge(change) }
        for _ in 0..<20 {
            var shuffled = (all + all.filter { _ in random.chance(0.3) }).shuffled(using: &random)
            shuffled.shuffle(using: &random)
            var merged = MergedItem(item: Self.item)
            for change in shuffled { merged.merge(change) }
            #expect(merged == reference)
            #expect(merged.winner == reference.winner && merged.conflicts == reference.conflicts)
        }
        // The winner is the newest version, and no change is lost: each is the winner, a
        // conflict, or replaced by another.
        #expect(reference.winner?.version == all.map(\.version).max())
        let replaced = Set(all.flatMap(\.replaces))
        for change in all {
            #expect(change == reference.winner || reference.conflicts.contains(change) || replaced.contains(change.version))
        }
    }
}
