import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// A commit of several changes is written and flushed in one go, ended by a commit record
/// that vouches for the records before it. A crash during that flush can leave any of the
/// batch's pages on disk: what it leaves is an unfinished write, kept aside without a loss,
/// while the same damage in a batch that committed data follows is reported, never cut off.
@Suite struct StoreBatchTests {
    /// The kind byte of a commit record that ends its batch.
    static let commitKind: UInt8 = 4 | 0x80

    /// `work` with one item ("before", whose secret is `before`), then a batch of `count` items
    /// ("b0"…), each long enough that the batch spans several 512-byte sectors. Returns where
    /// the batch starts, where its commit record starts, and where it ends.
    ///
    /// Not `acknowledged`: the batch is written as a write a crash interrupts before it is
    /// acknowledged (`StoreFixture.unacknowledged`), so that what a test leaves of it is judged
    /// by the file's bytes alone (acknowledged records missing are damage whatever is left).
    func withBatch(_ fixture: StoreFixture, count: Int = 8, before: String = "s",
                   acknowledged: Bool = true) throws -> (start: Int, commit: Int, end: Int) {
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.add(NewItem(label: "before", attributes: ["n": "before"], secret: secret(before)), to: work)
        let start = try fixture.records("work").count
        let batch = try items("b", count)
        if acknowledged {
            _ = try keychain.insertAll(batch, into: work)
        } else {
            _ = try fixture.unacknowledged { try keychain.insertAll(batch, into: work) }
        }
        let records = try fixture.records("work")
        let commit = try #require(recordStart(endingAt: records.count, in: records))
        return (start, commit, records.count)
    }

    /// `count` items named `prefix0`…, with secrets of `secretLength` bytes.
    func items(_ prefix: String, _ count: Int, secretLength: Int = 300) throws -> [NewItem] {
        try (0..<count).map { n in
            NewItem(label: "\(prefix)\(n)", attributes: ["n": "\(prefix)\(n)"],
                    secret: try secret(String(repeating: "x", count: secretLength)))
        }
    }

    /// The names of the items in `work`, unlocked with `text`.
    func names(_ keychain: Keychain, password text: String = "pw") throws -> Set<String> {
        try keychain.unlock(work, password: password(text))
        return Set(try keychain.search(Query(collection: work, returnAttributes: true)).compactMap { $0.metadata?.attributes["n"] })
    }

    /// The first whole 512-byte sector inside `range`.
    func wholeSector(in range: Range<Int>) throws -> Range<Int> {
        let lower = (range.lowerBound + 511) / 512 * 512
        try #require(lower + 512 <= range.upperBound, "no whole sector inside \(range)")
        return lower..<lower + 512
    }

    /// `range` of `bytes` set to zeros (a sector that never reached the disk).
    func zero(_ range: Range<Int>, in bytes: inout [UInt8]) {
        bytes.replaceSubrange(range, with: repeatElement(0, count: range.count))
    }

    @Test func severalChangesAreOneBatchEndedByACommitRecord() throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture, count: 3)
        let records = try fixture.records("work")
        #expect(records[commit + 4] == Self.commitKind)
        // The items before it do not end a batch themselves.
        var offset = start
        var items = 0
        while offset < commit {
            let length = Int(records[offset]) | Int(records[offset + 1]) << 8 | Int(records[offset + 2]) << 16
            #expect(records[offset + 4] == 1, "item record at \(offset) has kind byte \(records[offset + 4])")
            offset += 4 + length
            items += 1
        }
        #expect(offset == commit)
        #expect(items == 3)
        #expect(try names(try fixture.keychain()) == ["before", "b0", "b1", "b2"])
    }

    /// Where in the batch a crash lost a sector: the one the batch starts in (so the first
    /// record's length word is zero), or one in the middle.
    enum LostSector: CaseIterable { case batchStart, middle }

    @Test(arguments: LostSector.allCases)
    func aBatchWithASectorThatNeverArrivedIsAnUnfinishedWrite(lost: LostSector) throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture, acknowledged: false)
        var bytes = try fixture.bytes("work")
        let zeroed: Range<Int>
        switch lost {
        case .batchStart:
            zeroed = start..<(start / 512 + 1) * 512
        case .middle:
            zeroed = try wholeSector(in: (start + commit) / 2..<commit)
        }
        zero(zeroed, in: &bytes)
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery == nil)
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)")
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(FileManager.default.fileExists(atPath: fixture.path("work") + ".unfinished"))
        #expect(!FileManager.default.fileExists(atPath: fixture.path("work") + ".quarantine"))
        #expect(try names(try fixture.keychain()) == ["before", "after"])
    }

    /// The same lost sector in a batch that a later commit follows is damage to committed data:
    /// the file is reported and left as it is.
    @Test func aLostSectorInABatchThatCommittedDataFollowsIsCorrupt() throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture)
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try keychain.add(NewItem(label: "later", attributes: ["n": "later"], secret: secret("l")), to: work)
        var bytes = try fixture.bytes("work")
        let zeroed = try wholeSector(in: start..<commit)
        zero(zeroed, in: &bytes)
        try fixture.write(bytes, to: "work")
        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
        #expect(try fixture.bytes("work") == bytes, "the damaged file was modified")
    }

    /// A flipped byte is not what a crash leaves: in the last batch it is damage, kept aside as
    /// a loss.
    @Test func aFlippedByteInTheLastBatchIsDamage() throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture, acknowledged: false)
        var bytes = try fixture.bytes("work")
        bytes[(start + commit) / 2] ^= 0x10
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery?.contains("damaged") == true)
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(FileManager.default.fileExists(atPath: fixture.path("work") + ".quarantine"))
    }

    /// Intact records whose commit record vouches for other ones (a commit record copied from
    /// an earlier batch of the same length) do not count: the batch is damage.
    @Test func aCommitRecordForOtherRecordsDoesNotCommitThem() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let start = try fixture.records("work").count
        let pair = { (prefix: String) throws -> [NewItem] in
            try ["1", "2"].map { NewItem(label: prefix + $0, attributes: ["n": prefix + $0], secret: try secret("same length")) }
        }
        _ = try keychain.insertAll(try pair("a"), into: work)
        let first = try fixture.records("work")
        let firstCommit = try #require(recordStart(endingAt: first.count, in: first))
        _ = try keychain.insertAll(try pair("b"), into: work)
        let second = try fixture.records("work")
        let secondCommit = try #require(recordStart(endingAt: second.count, in: second))
        try #require(secondCommit - first.count == firstCommit - start, "the two batches differ in length")
        let forged = Array(second[..<secondCommit]) + first[firstCommit...]
        try fixture.write(forged, to: "work")

        let reopened = try fixture.keychain()
        let found = try names(reopened)
        #expect(found == ["a1", "a2"], "\(found) \(fixture.warnings.all)")
        #expect(try reopened.info(work).recovery?.contains("damaged") == true)
    }
}
