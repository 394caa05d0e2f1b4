import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// Acknowledged records lost at the end of a collection file (zeroed, cut off) are damage,
/// never an unfinished write: what is left of them goes to the quarantine file, the collection
/// is reported recovered with losses, and no id they held is handed out again. What a crash
/// leaves of a write that was never acknowledged is still an unfinished write.
@Suite struct StoreLostRecordsTests {
    /// `work` with items 1 to `count` added one at a time (each its own batch, item ids 1 to
    /// `count`); the store and the file's records.
    func populated(_ count: Int) throws -> (StoreFixture, [UInt8]) {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        for n in 1...count {
            let added = try keychain.add(NewItem(label: "i\(n)", attributes: ["n": String(n)], secret: secret("secret \(n)")), to: work)
            try #require(added.item == ItemID(n))
        }
        return (fixture, try fixture.records("work"))
    }

    /// The starts of the records ending at `end`, the last first, down to the file's first.
    func recordStarts(endingAt end: Int, in bytes: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var end = end
        while let start = recordStart(endingAt: end, in: bytes) {
            starts.append(start)
            end = start
        }
        return starts
    }

    /// The entries of a set-aside file: each one's line and the bytes after it.
    func entries(_ path: String) throws -> [(line: String, bytes: [UInt8])] {
        let contents = try #require(FileManager.default.contents(atPath: path).map(Array.init), "\(path) is missing")
        var found: [(String, [UInt8])] = []
        var offset = 0
        while offset < contents.count {
            let newline = try #require(contents[offset...].firstIndex(of: 0x0A))
            let line = String(decoding: contents[offset..<newline], as: UTF8.self)
            let fields = line.split(separator: " ")
            let length = try #require(fields.firstIndex(of: "length").flatMap { Int(fields[$0 + 1]) }, "\(line)")
            found.append((line, Array(contents[(newline + 1)..<(newline + 1 + length)])))
            #expect(contents[newline + 1 + length] == 0x0A)
            offset = newline + 2 + length
        }
        return found
    }

    func labels(_ keychain: Keychain) throws -> Set<String> {
        Set(try keychain.search(Query(collection: work, returnAttributes: true)).compactMap { $0.metadata?.label })
    }

    var quarantine: (StoreFixture) -> String { { $0.path("work") + ".quarantine" } }
    var unfinished: (StoreFixture) -> String { { $0.path("work") + ".unfinished" } }

    /// Expects `work`, opened afresh, to hold items 1 to `kept` of `count` and to report `lost`
    /// acknowledged records missing as damage; the next change then sets `left` (found at
    /// `offset`) aside in the quarantine file, with the loss, and gives the new item an id past
    /// every one acknowledged; and a later opening says the same without counting the loss again.
    func expectLoss(_ fixture: StoreFixture, kept: Int, of count: Int, lost: Int, left: [UInt8], at offset: Int,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try labels(keychain) == Set((1...kept).map { "i\($0)" }), sourceLocation: sourceLocation)
        let recovery = try keychain.info(work).recovery
        #expect(recovery?.hasPrefix("damaged: \(lost) acknowledged records are missing") == true, "\(String(describing: recovery))",
                sourceLocation: sourceLocation)
        #expect(fixture.warnings.all.contains { $0.contains("\(lost) acknowledged records are missing") && $0.contains("damage") },
                "\(fixture.warnings.all)", sourceLocation: sourceLocation)
        #expect(!fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)", sourceLocation: sourceLocation)

        let added = try keychain.add(NewItem(label: "new", attributes: ["n": "new"], secret: secret("new")), to: work)
        #expect(added.item > ItemID(count), "item id \(added.item) may be one of a lost item", sourceLocation: sourceLocation)
        let setAside = try entries(quarantine(fixture))
        #expect(setAside.count == 1, sourceLocation: sourceLocation)
        #expect(setAside.first?.line.hasSuffix("offset \(offset) length \(left.count) lost \(lost)") == true, "\(setAside.map(\.line))",
                sourceLocation: sourceLocation)
        #expect(setAside.first?.bytes == left, "what is left of the lost records was not set aside as it was", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: unfinished(fixture)), sourceLocation: sourceLocation)
        #expect(try keychain.info(work).recovery?.hasPrefix("recovered with losses") == true, sourceLocation: sourceLocation)

        let warned = fixture.warnings.all.count
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try labels(reopened) == Set((1...kept).map { "i\($0)" } + ["new"]), sourceLocation: sourceLocation)
        #expect(try reopened.info(work).recovery?.contains(quarantine(fixture)) == true, sourceLocation: sourceLocation)
        let later = try reopened.add(NewItem(label: "later", attributes: ["n": "later"], secret: secret("later")), to: work)
        #expect(later.item > added.item, sourceLocation: sourceLocation)
        #expect(try entries(quarantine(fixture)).count == 1, "the loss was set aside again", sourceLocation: sourceLocation)
        #expect(fixture.warnings.all.count == warned, "\(fixture.warnings.all[warned...])", sourceLocation: sourceLocation)
    }

    /// The tester's `zero_tail`: the bytes of the last two records (two acknowledged items)
    /// overwritten with zeros, from a few bytes into the first of them (what is left of it then
    /// looks like the start of a record whose later sectors never reached the disk) or from its
    /// very start (nothing is left: the zeros look like the free space after the last record).
    /// Both were taken for the end of the file or an unfinished write, and the next new item
    /// got the id of a lost one.
    @Test(arguments: [40, 0])
    func zeroedLastRecordsAreALoss(bytesLeft: Int) throws {
        let (fixture, records) = try populated(21)
        let lostStart = try #require(recordStarts(endingAt: records.count, in: records).dropFirst().first)
        var bytes = try fixture.bytes("work")
        bytes.replaceSubrange((lostStart + bytesLeft)..<records.count, with: repeatElement(0, count: records.count - lostStart - bytesLeft))
        try fixture.write(bytes, to: "work")
        let leftEnd = bytesLeft == 0 ? lostStart : (bytes[..<records.count].lastIndex { $0 != 0 } ?? lostStart) + 1
        try expectLoss(fixture, kept: 19, of: 21, lost: 2, left: Array(bytes[lostStart..<leftEnd]), at: lostStart)
    }

    /// The tester's `trunc_half`: the file cut in the middle of its records, half of the
    /// acknowledged items with them. It was taken for an unfinished write.
    @Test func aFileCutInTheMiddleIsALoss() throws {
        let (fixture, records) = try populated(22)
        let starts = recordStarts(endingAt: records.count, in: records)
        var cut = records.count / 2
        while starts.contains(cut) || records[cut - 1] == 0 { cut += 1 }
        let cutRecord = try #require(starts.first { $0 < cut })
        let lost = starts.filter { $0 >= cutRecord }.count
        try #require(lost >= 8 && lost <= 14, "cut at \(cut) of \(records.count)")
        try fixture.write(Array(records[..<cut]), to: "work")
        try expectLoss(fixture, kept: 22 - lost, of: 22, lost: lost, left: Array(records[cutRecord..<cut]), at: cutRecord)
    }

    /// What a write leaves when it crashes before it is acknowledged.
    enum Crash: CaseIterable {
        /// One change whose later sectors never reached the disk.
        case oneChangeCutShort
        /// A batch of several changes whose sectors from one inside it onwards never did.
        case batchCutMidway
    }

    /// A crash during a write that was never acknowledged is still an unfinished write: the
    /// acknowledged items all stay, nothing is reported lost, and what the write left is set
    /// aside as unfinished, not as damage.
    @Test(arguments: Crash.allCases)
    func aCrashDuringAWriteIsStillAnUnfinishedWrite(crash: Crash) throws {
        let (fixture, before) = try populated(5)
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        let long = String(repeating: "x", count: 1500)
        try fixture.unacknowledged {
            switch crash {
            case .oneChangeCutShort:
                _ = try keychain.add(NewItem(label: "crashed", attributes: ["n": "crashed"], secret: secret(long)), to: work)
            case .batchCutMidway:
                _ = try keychain.insertAll((0..<3).map { NewItem(label: "c\($0)", attributes: ["n": "c\($0)"], secret: try secret(long)) },
                                           into: work)
            }
        }
        let records = try fixture.records("work")
        var bytes = try fixture.bytes("work")
        let lostFrom = (before.count / 512 + 2) * 512
        try #require(lostFrom < records.count)
        bytes.replaceSubrange(lostFrom..<records.count, with: repeatElement(0, count: records.count - lostFrom))
        try fixture.write(bytes, to: "work")
        let left = Array(bytes[before.count..<((bytes[..<lostFrom].lastIndex { $0 != 0 } ?? 0) + 1)])

        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try labels(reopened) == Set((1...5).map { "i\($0)" }))
        #expect(try reopened.info(work).recovery == nil, "\(fixture.warnings.all)")
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)")
        try reopened.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        let kept = try entries(unfinished(fixture))
        #expect(kept.count == 1 && kept.first?.bytes == left && kept.first?.line.hasSuffix("length \(left.count)") == true,
                "\(kept.map(\.line))")
        #expect(!FileManager.default.fileExists(atPath: quarantine(fixture)))
        #expect(try reopened.info(work).recovery == nil)
    }

    /// A lock file without a mark, as Coffer wrote it before the mark: the collection opens with
    /// all its items and nothing reported, and a record cut short at its end is judged by the
    /// file's bytes alone (as before: an unfinished write). Once a change is written, the mark
    /// is there, and the same cut of an acknowledged record is a loss.
    @Test func aLockFileWithoutAMarkTellsNothingUntilTheNextChange() throws {
        let (fixture, _) = try populated(3)
        let lockPath = fixture.directory + "/work.lock"
        try Data().write(to: URL(fileURLWithPath: lockPath))
        let old = try fixture.keychain()
        try old.unlock(work, password: password("pw"))
        #expect(try labels(old) == ["i1", "i2", "i3"])
        #expect(try old.info(work).recovery == nil)
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")

        let full = try fixture.records("work")
        try fixture.write(Array(full.dropLast(7)), to: "work")
        let cut = try fixture.keychain()
        try cut.unlock(work, password: password("pw"))
        #expect(try cut.info(work).recovery == nil, "\(fixture.warnings.all)")
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)")

        try cut.add(NewItem(label: "i4", attributes: ["n": "4"], secret: secret("secret 4")), to: work)
        let marked = try fixture.records("work")
        let last = try #require(recordStart(endingAt: marked.count, in: marked))
        try fixture.write(Array(marked.dropLast(7)), to: "work")
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.info(work).recovery?.hasPrefix("damaged: 1 acknowledged record is missing") == true, "\(fixture.warnings.all)")
        try reopened.add(NewItem(label: "i5", attributes: ["n": "5"], secret: secret("secret 5")), to: work)
        let kept = try entries(quarantine(fixture))
        #expect(kept.last?.bytes == Array(marked[last..<(marked.count - 7)]))
        #expect(kept.last?.line.hasSuffix("lost 1") == true)
    }

    /// A lock file whose mark (checksum fixed up, as damage that passes it or a forger would
    /// leave) names the file and counters at the top of their range: it is ignored, and the
    /// next item gets the next id. Taken in, the next id overflowed and the process trapped.
    @Test(arguments: [UInt64.max, UInt64.max / 2])
    func aMarkWithCountersOutOfRangeIsIgnored(counter: UInt64) throws {
        let (fixture, records) = try populated(2)
        // magic 8, u16 format version: the uuid follows.
        var mark = Array("COFFACK1".utf8) + records[10..<26]
        for value in [counter, counter, counter] {
            for i in 0..<8 { mark.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
        }
        let crc = Digest.crc32(mark[...])
        for i in 0..<4 { mark.append(UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))) }
        try Data(mark).write(to: URL(fileURLWithPath: fixture.directory + "/work.lock"))

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.info(work).recovery == nil)
        let added = try keychain.add(NewItem(label: "i3", attributes: ["n": "3"], secret: secret("secret 3")), to: work)
        #expect(added.item == 3)
    }

    /// A label change lost at the end of the file (its meta record zeroed) is a loss too: the
    /// collection reads with the label it had before and says so.
    @Test func aLostLabelChangeIsALoss() throws {
        let (fixture, before) = try populated(2)
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try keychain.collection(work).setLabel("Renamed")
        let records = try fixture.records("work")
        var bytes = try fixture.bytes("work")
        bytes.replaceSubrange(before.count..<records.count, with: repeatElement(0, count: records.count - before.count))
        try fixture.write(bytes, to: "work")

        let reopened = try fixture.keychain()
        #expect(try reopened.info(work).label == "Work")
        #expect(try reopened.info(work).recovery?.hasPrefix("damaged: 1 acknowledged record is missing") == true, "\(fixture.warnings.all)")
    }
}
