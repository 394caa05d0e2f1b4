import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// Damaged files: clear errors naming the file, nothing overwritten, other collections fine.
@Suite struct StoreDamageTests {
    /// A store with collections `work` (three items) and `login` (one item).
    func populated() throws -> StoreFixture {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.createCollection(label: "Login", id: .login, password: password("pw"))
        for n in 0..<3 {
            try keychain.add(NewItem(label: "w\(n)", attributes: ["n": String(n)], secret: secret("s\(n)")), to: work)
        }
        try keychain.add(NewItem(label: "l", attributes: ["n": "login"], secret: secret("l")), to: .login)
        return fixture
    }

    @Test func flippedByteInACommittedRecordIsReportedAndNothingIsOverwritten() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let middle = bytes.count / 2
        bytes[middle] ^= 0x40
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect {
            try keychain.info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
        #expect(throws: CofferError.self) {
            try keychain.add(NewItem(label: "x", attributes: [:], secret: secret("s")), to: work)
        }
        // Other collections keep working; a search over everything skips the damaged one.
        try keychain.unlock(.login, password: password("pw"))
        #expect(text(try keychain.search(Query(attributes: ["n": "login"], returnSecret: true)).first?.secret) == "l")
        #expect(try fixture.bytes("work") == bytes, "the damaged file was modified")
    }

    /// The starts of the last two records, found from the end (length field + checksum).
    func lastTwoRecordStarts(_ bytes: [UInt8]) throws -> (previous: Int, last: Int) {
        let last = try #require(recordStart(endingAt: bytes.count, in: bytes))
        let previous = try #require(recordStart(endingAt: last, in: bytes))
        return (previous, last)
    }

    /// A damaged length field in committed data is reported, never taken for an unfinished
    /// write and cut off (which would lose every acknowledged record after it).
    @Test(arguments: [UInt32(0x00FF_FFFF), UInt32(0x7FFF_FFFF), UInt32(40)])
    func damagedLengthInsideCommittedDataIsCorrupt(length: UInt32) throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let (previous, _) = try lastTwoRecordStarts(bytes)
        for i in 0..<4 { bytes[previous + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
        try fixture.write(bytes, to: "work")
        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
        #expect(throws: CofferError.self) {
            try fixture.keychain().add(NewItem(label: "x", attributes: [:], secret: secret("s")), to: work)
        }
        #expect(try fixture.bytes("work") == bytes, "the damaged file was modified")
    }

    /// A password slot asking Argon2 for absurd memory is refused before any key derivation
    /// runs (its MAC could only be checked after one).
    @Test func slotWithAbsurdKeyDerivationParametersIsRefused() throws {
        let fixture = try populated()
        let keys = URL(fileURLWithPath: "\(fixture.directory)/work.keys")
        var bytes = Array(try Data(contentsOf: keys))
        // magic 8, version 2, uuid 16, count 1; the slot: kind 1, id 4, created 8, t 4: m (KiB)
        // starts at byte 44.
        for i in 0..<4 { bytes[44 + i] = 0xFF }
        try Data(bytes).write(to: keys)
        #expect {
            try fixture.keychain().unlock(work, password: password("pw"))
        } throws: { error in
            guard case CofferError.storeCorrupt(_, let reason) = error else { return false }
            return reason.contains("key derivation parameters")
        }
    }

    /// Someone who can write the file appends a removal record with a correct checksum but
    /// no valid seal. Unlocking checks it and reports the file instead of accepting the removal
    /// (and compaction would otherwise have made it permanent).
    @Test func forgedRemovalRecordIsCaughtAtUnlock() throws {
        let fixture = try populated()
        var body: [UInt8] = [0x82]                                      // removal, ends its batch
        func u64(_ v: UInt64) { for i in 0..<8 { body.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        func u32(_ v: UInt32, into bytes: inout [UInt8]) { for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) } }
        u64(1_000)                                                      // sequence
        u64(1)                                                          // timestamp
        u64(2)                                                          // item id
        u32(0, into: &body)                                             // no public part
        body += [UInt8](repeating: 0, count: 12)                        // nonce
        u32(16, into: &body)
        body += [UInt8](repeating: 0, count: 16)                        // a tag that seals nothing
        u32(Digest.crc32(body[...]), into: &body)
        var frame: [UInt8] = []
        u32(UInt32(body.count), into: &frame)
        try fixture.write(try fixture.records("work") + frame + body, to: "work")

        let keychain = try fixture.keychain()
        #expect(try keychain.search(Query(collection: work)).count == 2, "while locked, only the checksum speaks")
        #expect {
            try keychain.unlock(work, password: password("pw"))
        } throws: { error in
            guard case CofferError.storeCorrupt(_, let reason) = error else { return false }
            return reason.contains("authentication")
        }
        #expect(try keychain.info(work).isLocked)
    }

    @Test func damagedHeaderIsCorruptNotAWrongPassword() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        bytes[30] ^= 0x01
        try fixture.write(bytes, to: "work")
        #expect(throws: CofferError.self) { try fixture.keychain().info(work) }
        #expect {
            try fixture.keychain().unlock(work, password: password("pw"))
        } throws: { error in
            if case CofferError.storeCorrupt = error { return true }
            return false
        }
    }

    /// A crash while a fourth item was written cut the file inside its record.
    @Test func truncatedTailIsDroppedWithAWarningAndRemovedOnTheNextWrite() throws {
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
        #expect(try keychain.search(Query(collection: work)).count == 3)
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") })
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)

        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        let all = try reopened.search(Query(collection: work, returnAttributes: true))
        #expect(Set(all.compactMap { $0.metadata?.label }) == ["w0", "w1", "w2", "after"])
    }

    @Test func truncatedHeaderIsCorrupt() throws {
        let fixture = try populated()
        try fixture.write(Array(try fixture.bytes("work").prefix(40)), to: "work")
        #expect(throws: CofferError.self) { try fixture.keychain().info(work) }
        try fixture.write([], to: "work")
        #expect(throws: CofferError.self) { try fixture.keychain().info(work) }
    }

    @Test func recordWithValidChecksumButForgedContentFailsAuthentication() throws {
        // Someone who can write the file changes a record and fixes its CRC: the checksum no
        // longer helps, but the record's authentication tag does.
        let fixture = try populated()
        var bytes = try fixture.records("work")
        let end = bytes.count
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let lastFrame = try #require((0..<end - 8).reversed().first { p in
            u32(p) == end - p - 4 && UInt32(u32(end - 4)) == Digest.crc32(bytes[(p + 4)..<(end - 4)])
        })
        bytes[end - 20] ^= 0xFF
        let crc = Digest.crc32(bytes[(lastFrame + 4)..<(end - 4)])
        for i in 0..<4 { bytes[end - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try keychain.search(Query(attributes: ["n": "2"])).count == 1, "locked search uses the index")
        try keychain.unlock(work, password: password("pw"))
        #expect {
            _ = try keychain.search(Query(attributes: ["n": "2"], returnSecret: true))
        } throws: { error in
            guard case CofferError.storeCorrupt(_, let reason) = error else { return false }
            return reason.contains("authentication")
        }
        #expect(text(try keychain.search(Query(attributes: ["n": "1"], returnSecret: true)).first?.secret) == "s1")
    }

    /// An item whose record fails authentication can still be deleted, in a batch with one
    /// that can be read: the removal of the readable one reports its label, the damaged one's
    /// none, and neither is left behind.
    @Test func aDamagedItemCanStillBeRemoved() throws {
        let fixture = try populated()
        var bytes = try fixture.records("work")
        // The last record is item "w2"'s: a byte of its sealed payload changed, its CRC fixed.
        let end = bytes.count
        let last = try #require(recordStart(endingAt: end, in: bytes))
        bytes[end - 20] ^= 0xFF
        let crc = Digest.crc32(bytes[(last + 4)..<(end - 4)])
        for i in 0..<4 { bytes[end - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        // Found while locked, through the index: unlocked, a search reads what it matches.
        let damaged = try #require(try keychain.search(Query(attributes: ["n": "2"])).first?.reference)
        let readable = try #require(try keychain.search(Query(attributes: ["n": "1"])).first?.reference)
        try keychain.unlock(work, password: password("pw"))
        #expect(throws: CofferError.self) { try keychain.metadata(of: damaged) }
        let removed = try keychain.commit([.remove(readable.item), .remove(damaged.item)], in: work)
        #expect(removed.map(\.label) == ["w1", nil])
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.search(Query(collection: work)).count == 1)
    }
}
