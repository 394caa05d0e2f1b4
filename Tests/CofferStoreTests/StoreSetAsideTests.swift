import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// Bytes at the end of a file that fail verification are never destroyed: before the file is
/// cut short they are copied aside, the collection says it was recovered with losses when they
/// were damage, and no item id they might have held is handed out again.
@Suite struct StoreSetAsideTests {
    /// `work` with three items (ids 1, 2, 3).
    func populated() throws -> StoreFixture {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        for n in 0..<3 {
            try keychain.add(NewItem(label: "w\(n)", attributes: ["n": String(n)], secret: secret("s\(n)")), to: work)
        }
        return fixture
    }

    func quarantine(_ fixture: StoreFixture) -> String { fixture.path("work") + ".quarantine" }

    /// A flipped byte in the last committed record: the collection opens without that item and
    /// says it is damaged; the next change first copies the record aside, then goes on, and the
    /// new item does not reuse the lost item's id.
    @Test func aDamagedLastRecordIsSetAsideAndItsIdIsNotReused() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let lastRecord = try #require(recordStart(endingAt: bytes.count, in: bytes))
        bytes[lastRecord + 30] ^= 0x01
        try fixture.write(bytes, to: "work")
        let damaged = Array(bytes[lastRecord...])

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.search(Query(collection: work)).count == 2)
        #expect(try keychain.info(work).recovery?.contains("damaged") == true)
        #expect(fixture.warnings.all.contains { $0.contains("fail verification") && $0.contains("damage") })
        #expect(!FileManager.default.fileExists(atPath: quarantine(fixture)), "set aside before any change")

        let added = try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(added.item > 3, "the id of the lost item 3 was handed out again")
        let kept = try #require(FileManager.default.contents(atPath: quarantine(fixture)))
        #expect(Array(kept).firstRange(of: damaged) != nil, "the damaged record is not in the quarantine file")
        #expect(try keychain.info(work).recovery?.contains("recovered with losses") == true)

        // Reopened: the id stays reserved, the report stays, the items are the ones expected.
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        let next = try reopened.add(NewItem(label: "later", attributes: ["n": "later"], secret: secret("l")), to: work)
        #expect(next.item > added.item)
        #expect(try reopened.info(work).recovery?.contains(quarantine(fixture)) == true)
        let labels = Set(try reopened.search(Query(collection: work, returnAttributes: true)).compactMap { $0.metadata?.label })
        #expect(labels == ["w0", "w1", "after", "later"])
    }

    /// The same damage when the damaged record's checksum ends in a zero byte (one record in
    /// 256), with or without reserved space after it: that zero is the record's, so the record
    /// is whole and damaged, not cut short by a crash, and it is set aside whole.
    @Test(arguments: [0, 4096])
    func aDamagedLastRecordEndingInAZeroByteIsDamage(reservedSpace: Int) throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let lastRecord = try #require(recordStart(endingAt: bytes.count, in: bytes))
        bytes[lastRecord + 30] ^= 0x01
        bytes[bytes.count - 1] = 0   // the last byte of its checksum
        try expectLastRecordSetAsideWhole(bytes, from: lastRecord, reservedSpace: reservedSpace, in: fixture)
    }

    /// Writes `bytes`, whose record from `lastRecord` on is damaged, with `reservedSpace` zeros
    /// after: the collection opens with `items` items, without that one, and reports damage, and
    /// the next change sets the record aside whole.
    func expectLastRecordSetAsideWhole(_ bytes: [UInt8], from lastRecord: Int, reservedSpace: Int,
                                       in fixture: StoreFixture, items: Int = 2,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        try fixture.write(bytes + [UInt8](repeating: 0, count: reservedSpace), to: "work")
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.search(Query(collection: work)).count == items, sourceLocation: sourceLocation)
        #expect(try keychain.info(work).recovery?.contains("damaged") == true, "\(fixture.warnings.all)", sourceLocation: sourceLocation)
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        let kept = try #require(FileManager.default.contents(atPath: quarantine(fixture)), sourceLocation: sourceLocation)
        #expect(Array(kept).firstRange(of: Array(bytes[lastRecord...]) + [0x0A]) != nil, "the damaged record was not set aside whole",
                sourceLocation: sourceLocation)
    }

    /// Recomputes the checksum of the record at `start` ending at `end` (as a forger would).
    func fixChecksum(ofRecordAt start: Int, endingAt end: Int, in bytes: inout [UInt8]) {
        let crc = Digest.crc32(bytes[(start + 4)..<(end - 4)])
        for i in 0..<4 { bytes[end - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
    }

    /// The last record made malformed inside (a record kind no version writes) with a checksum
    /// that holds and ends in a zero byte: whole and damaged, not cut short by a crash.
    @Test func aMalformedLastRecordWithAChecksumEndingInAZeroByteIsDamage() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let lastRecord = try #require(recordStart(endingAt: bytes.count, in: bytes))
        bytes[lastRecord + 4] = 0xBF   // kind 0x3F, ending its batch (0x80)
        // A tag byte chosen so that the fixed-up checksum ends in a zero byte.
        let tagByte = bytes.count - 5
        for value in UInt8.min...UInt8.max {
            bytes[tagByte] = value
            fixChecksum(ofRecordAt: lastRecord, endingAt: bytes.count, in: &bytes)
            if bytes[bytes.count - 1] == 0 { break }
        }
        try #require(bytes[bytes.count - 1] == 0, "no tag byte gave a checksum ending in a zero byte")
        try expectLastRecordSetAsideWhole(bytes, from: lastRecord, reservedSpace: 4096, in: fixture)
    }

    /// The last record with a field stating more bytes than the record holds, its checksum
    /// fixed up: the record is all there, so this is damage, not a write cut short.
    @Test func aLastRecordWhoseFieldRunsPastItsEndIsDamage() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let lastRecord = try #require(recordStart(endingAt: bytes.count, in: bytes))
        // u32 length, kind, sequence, timestamp, item id: the public part's u32 length follows.
        let publicLength = lastRecord + 4 + 1 + 24
        for i in 0..<4 { bytes[publicLength + i] = [0xF0, 0xFF, 0x00, 0x00][i] }
        fixChecksum(ofRecordAt: lastRecord, endingAt: bytes.count, in: &bytes)
        try expectLastRecordSetAsideWhole(bytes, from: lastRecord, reservedSpace: 4096, in: fixture)
    }

    /// `work` with three items and a fourth whose record ends `end` bytes after a sector
    /// boundary (its secret's length chosen for that), the last `zeroed` of them not all zero
    /// already and the byte before them not zero (so that zeroing them leaves zeros exactly
    /// there); the file's records. The fourth is written as a write a crash interrupts before
    /// it is acknowledged, so that what the test leaves of it is judged by its bytes alone.
    func populated(lastRecordEndingAt end: Int, zeroed: Int) throws -> (StoreFixture, [UInt8]) {
        var length = 100
        for filler in ["y", "z", "w", "v", "u", "t"] {
            let fixture = try populated()
            let keychain = try fixture.keychain()
            try keychain.unlock(work, password: password("pw"))
            try fixture.unacknowledged {
                try keychain.add(NewItem(label: "last", attributes: ["n": "last"], secret: secret(String(repeating: filler, count: length))),
                                 to: work)
            }
            let bytes = try fixture.records("work")
            let short = (end - bytes.count % 512 + 512) % 512
            guard short == 0 else {
                length += short
                continue
            }
            if !bytes[(bytes.count - zeroed)...].allSatisfy({ $0 == 0 }), bytes[bytes.count - zeroed - 1] != 0 { return (fixture, bytes) }
        }
        throw CofferError.invalidArgument("could not place the last record as the test needs")
    }

    /// A crash whose lost sector held only the last 1 to 3 bytes of the last record (its
    /// checksum's end, zeros on disk, reserved space after): what is left of the checksum matches
    /// the record, so this is an unfinished write, set aside as one and not reported as damage.
    /// The same zeros where no sector starts are no lost sector: damage, set aside whole.
    @Test(arguments: [1, 2, 3], [true, false])
    func aChecksumEndLostWithItsSectorIsAnUnfinishedWrite(lostBytes: Int, sectorStartsThere: Bool) throws {
        let (fixture, original) = try populated(lastRecordEndingAt: sectorStartsThere ? lostBytes : lostBytes + 100, zeroed: lostBytes)
        var bytes = original
        let lastRecord = try #require(recordStart(endingAt: bytes.count, in: bytes))
        for index in (bytes.count - lostBytes)..<bytes.count { bytes[index] = 0 }
        guard sectorStartsThere else {
            try expectLastRecordSetAsideWhole(bytes, from: lastRecord, reservedSpace: 4096, in: fixture, items: 3)
            return
        }
        let left = Array(bytes[lastRecord..<(bytes.count - lostBytes)])
        try fixture.write(bytes + [UInt8](repeating: 0, count: 4096), to: "work")

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.search(Query(collection: work)).count == 3)
        #expect(try keychain.info(work).recovery == nil, "\(fixture.warnings.all)")
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)")
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        let kept = try #require(FileManager.default.contents(atPath: fixture.path("work") + ".unfinished"))
        #expect(Array(kept).firstRange(of: left) != nil, "what the write left was not set aside")
        #expect(!FileManager.default.fileExists(atPath: quarantine(fixture)))
    }

    /// Everything after the header overwritten with random bytes: the collection opens empty,
    /// and the next write keeps all of those bytes in the quarantine file first.
    @Test func garbageOverEveryRecordIsKeptAside() throws {
        let fixture = try populated()
        let records = try fixture.records("work")
        let all = try fixture.bytes("work")
        // The header is under 200 bytes (magic, uuid, KDF, salt, lookup key, sealed data key).
        var generator = SystemRandomNumberGenerator()
        let start = 200
        var garbage = all
        for index in start..<records.count { garbage[index] = UInt8.random(in: 1...255, using: &generator) }
        try fixture.write(garbage, to: "work")

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try keychain.add(NewItem(label: "new", attributes: ["n": "new"], secret: secret("n")), to: work)
        let kept = try #require(FileManager.default.contents(atPath: quarantine(fixture)))
        #expect(Array(kept).firstRange(of: Array(garbage[start..<records.count])) != nil)
        #expect(try keychain.info(work).recovery != nil)
        let ids = try keychain.search(Query(collection: work)).map(\.reference.item)
        #expect(ids.allSatisfy { $0 > 3 }, "ids \(ids) reuse ones that may be in the lost records")
    }

    /// What a crash leaves of an unacknowledged write is kept aside too, but is not a loss.
    @Test func anUnfinishedWriteIsKeptAsideWithoutALoss() throws {
        let fixture = try populated()
        let writer = try fixture.keychain()
        try writer.unlock(work, password: password("pw"))
        try fixture.unacknowledged {
            try writer.add(NewItem(label: "w3", attributes: ["n": "3"], secret: secret("s3")), to: work)
        }
        let full = try fixture.records("work")
        try fixture.write(Array(full.dropLast(7)), to: "work")
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.info(work).recovery == nil)
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(FileManager.default.fileExists(atPath: fixture.path("work") + ".unfinished"))
        #expect(!FileManager.default.fileExists(atPath: quarantine(fixture)))
        #expect(try keychain.info(work).recovery == nil)
    }
}
