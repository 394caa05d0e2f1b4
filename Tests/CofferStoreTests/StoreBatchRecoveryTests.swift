import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import Testing

/// More of what a collection file's reader makes of a batch written in one flush: the tails a
/// crash leaves are unfinished writes, set aside; damage to what was acknowledged is reported,
/// never dropped; forged commit records never commit; files written by 0.3 (two flushes a
/// batch) still read; files after a recovery or a rewrite read back.
extension StoreBatchTests {
    // MARK: Helpers

    func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    /// The starts of the records from `start` up to `end`, walked by their length words.
    func recordStarts(_ bytes: [UInt8], from start: Int, to end: Int) -> [Int] {
        var starts: [Int] = []
        var offset = start
        while offset < end {
            starts.append(offset)
            offset += 4 + u32(bytes, offset)
        }
        return starts
    }

    /// The first 512-byte boundary strictly inside `range`.
    func sectorBoundary(in range: Range<Int>) throws -> Int {
        let boundary = (range.lowerBound / 512 + 1) * 512
        try #require(boundary < range.upperBound, "no sector boundary inside \(range)")
        return boundary
    }

    /// Sets the u64 length a commit record at `commit` states and fixes its CRC up (as damage
    /// that happens to pass the CRC, or a forger, would).
    func forgeCommitLength(_ length: UInt64, commitAt commit: Int, in bytes: inout [UInt8]) {
        let body = u32(bytes, commit)
        // u32 length, kind, seq 8, timestamp 8, item 8, u32 public length: the u64 follows.
        let field = commit + 4 + 1 + 24 + 4
        for i in 0..<8 { bytes[field + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(i))) }
        let crcAt = commit + 4 + body - 4
        let crc = Digest.crc32(bytes[(commit + 4)..<crcAt])
        for i in 0..<4 { bytes[crcAt + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
    }

    // MARK: Damage and crashes around a batch

    /// What the write after an acknowledged batch left: a batch of several changes, or one
    /// change, whose sectors from one inside it onwards never reached the disk.
    enum InterruptedWrite: CaseIterable { case severalChanges, oneChange }

    /// `withBatch`, then a write of `next` whose sectors from one inside it onwards never
    /// reached the disk: the file's bytes as the crash left them (not yet written back), and
    /// where the batch before that write starts and has its commit record.
    func withInterruptedWrite(_ fixture: StoreFixture, _ next: InterruptedWrite) throws -> (start: Int, commit: Int, bytes: [UInt8]) {
        let (start, commit, end) = try withBatch(fixture)
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try fixture.unacknowledged {
            switch next {
            case .severalChanges: _ = try keychain.insertAll(try items("later", 3), into: work)
            case .oneChange: try keychain.add(try items("later", 1, secretLength: 1500)[0], to: work)
            }
        }
        let records = try fixture.records("work")
        var bytes = try fixture.bytes("work")
        zero(try sectorBoundary(in: end + 8..<records.count)..<records.count, in: &bytes)
        return (start, commit, bytes)
    }

    /// The damage to the acknowledged batch: a sector that reads back as zeros, or a flipped
    /// byte. (0.3 reported both as corrupt: any intact batch end after damage did.)
    enum Damage: CaseIterable { case lostSector, flippedByte }

    /// A lost sector (or a flipped byte) inside a batch whose commit record is intact, followed
    /// by bytes of a later write that was interrupted. The later write proves the damaged batch
    /// was flushed and acknowledged (a writer only writes past a commit record once its flush
    /// returned, and the space after it is zero-filled), so this is damage to committed data:
    /// reported, the file left as it is, never taken for an unfinished write and set aside.
    @Test(arguments: InterruptedWrite.allCases, Damage.allCases)
    func aDamagedAcknowledgedBatchFollowedByAnInterruptedWriteIsCorrupt(next: InterruptedWrite, damage: Damage) throws {
        let fixture = try StoreFixture()
        var (start, commit, bytes) = try withInterruptedWrite(fixture, next)
        // The acknowledged batch lost a sector.
        switch damage {
        case .lostSector: zero(try wholeSector(in: start..<commit), in: &bytes)
        case .flippedByte: bytes[(start + commit) / 2] ^= 0x10
        }
        try fixture.write(bytes, to: "work")

        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
        let reopened = try fixture.keychain()
        if let found = try? names(reopened) {
            #expect(found.isSuperset(of: ["b0", "b7"]), "acknowledged items dropped: found \(found); \(fixture.warnings.all)")
        }
        #expect(try fixture.bytes("work") == bytes, "the damaged file was modified")
    }

    /// The same interrupted write after an intact batch is an unfinished write, and the batch
    /// before it stays.
    @Test(arguments: InterruptedWrite.allCases)
    func anInterruptedWriteAfterAnIntactBatchIsAnUnfinishedWrite(next: InterruptedWrite) throws {
        let fixture = try StoreFixture()
        try fixture.write(try withInterruptedWrite(fixture, next).bytes, to: "work")
        let reopened = try fixture.keychain()
        #expect(try names(reopened) == Set(["before"] + (0..<8).map { "b\($0)" }))
        #expect(try reopened.info(work).recovery == nil)
    }

    /// A batch that starts 1 to 3 bytes before a sector boundary, whose first sector never
    /// reached the disk: that sector keeps what it held (the committed bytes before the batch,
    /// then zeros), so the batch's first record starts with only 1 to 3 zero bytes. A plain
    /// crash: an unfinished write, set aside as such, not reported as damage.
    @Test(arguments: [1, 2, 3])
    func aLostFirstSectorOfABatchStartingJustBeforeASectorBoundaryIsAnUnfinishedWrite(bytesBeforeBoundary k: Int) throws {
        var padding = 1
        var found: (StoreFixture, Int)?
        for _ in 0..<6 {
            let fixture = try StoreFixture()
            let (start, _, _) = try withBatch(fixture, before: String(repeating: "p", count: padding), acknowledged: false)
            if start % 512 == 512 - k { found = (fixture, start); break }
            padding += ((512 - k) - start % 512 + 512) % 512
        }
        let (fixture, start) = try #require(found, "could not place the batch \(k) bytes before a sector boundary")
        var bytes = try fixture.bytes("work")
        zero(start..<start + k, in: &bytes)
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery == nil, "a crash tail reported as damage")
        #expect(fixture.warnings.all.contains { $0.contains("unfinished write") }, "\(fixture.warnings.all)")
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(FileManager.default.fileExists(atPath: fixture.path("work") + ".unfinished"))
        #expect(!FileManager.default.fileExists(atPath: fixture.path("work") + ".quarantine"))
    }

    /// A length word in the last batch that runs past the end of the file although the batch's
    /// intact commit record follows: a crash only leaves zeros, which never make a length
    /// longer, so this is damage like any other flipped byte (`aFlippedByteInTheLastBatchIsDamage`),
    /// not a record cut short by a crash.
    @Test func aLengthRunningPastTheBatchsIntactCommitRecordIsDamage() throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture, acknowledged: false)
        var bytes = try fixture.bytes("work")
        let second = recordStarts(bytes, from: start, to: commit)[1]
        bytes[second + 2] |= 0x40   // 4 MiB longer: past the end of the file
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery?.contains("damaged") == true, "\(fixture.warnings.all)")
    }

    /// The same damage in a batch whose commit record's checksum ends in a zero byte (one in
    /// 256): that zero is the commit record's, not reserved space. Cut off with the zeros after
    /// it, the commit record no longer read as one, and the damage passed for a write cut short.
    @Test func aLengthRunningPastACommitRecordEndingInAZeroByteIsDamage() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.add(NewItem(label: "before", attributes: ["n": "before"], secret: secret("s")), to: work)
        var committed: Set<String> = ["before"]
        var found: (start: Int, names: Set<String>)?
        for round in 0..<3000 where found == nil {
            let start = try fixture.records("work").count
            let batch = try items("r\(round)-", 2)
            _ = try keychain.insertAll(batch, into: work)
            let names = Set(batch.compactMap { $0.attributes["n"] })
            if try fixture.records("work").last == 0 { found = (start, names) } else { committed.formUnion(names) }
        }
        let (start, lost) = try #require(found, "no commit record ended in a zero byte")
        var bytes = try fixture.bytes("work")
        let second = recordStarts(bytes, from: start, to: try fixture.records("work").count)[1]
        bytes[second + 2] |= 0x40   // 4 MiB longer: past the end of the file
        try fixture.write(bytes, to: "work")

        let reopened = try fixture.keychain()
        #expect(try names(reopened) == committed)
        #expect(lost.isDisjoint(with: try names(reopened)))
        #expect(try reopened.info(work).recovery?.contains("damaged") == true, "\(fixture.warnings.all)")
    }

    // MARK: Commit records

    enum Cut: CaseIterable { case zeroed, truncated }

    /// A batch whose records all arrived but whose commit record did not (zeros, or the
    /// file ends exactly at the record boundary before it) is an unfinished write.
    @Test(arguments: Cut.allCases)
    func aBatchEndingJustBeforeItsCommitRecordIsAnUnfinishedWrite(cut: Cut) throws {
        let fixture = try StoreFixture()
        let (_, commit, end) = try withBatch(fixture, acknowledged: false)
        var bytes = try fixture.bytes("work")
        switch cut {
        case .zeroed: zero(commit..<end, in: &bytes)
        case .truncated: bytes = Array(bytes[..<commit])
        }
        try fixture.write(bytes, to: "work")
        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery == nil)
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        #expect(try names(try fixture.keychain()) == ["before", "after"])
    }

    /// Commit records stating a length of 0, one byte, one that reaches into committed
    /// data, one past the start of the file, and `UInt64.max` (CRC fixed up): no trap; in the
    /// last batch the batch is kept out as damage, before a committed batch the file is corrupt.
    @Test(arguments: [true, false])
    func commitRecordsWithForgedLengthsNeverCommitAndNeverTrap(last: Bool) throws {
        for which in 0..<7 {
            let fixture = try StoreFixture()
            let (start, commit, _) = try withBatch(fixture, count: 3, acknowledged: false)
            if !last {
                let keychain = try fixture.keychain()
                try keychain.unlock(work, password: password("pw"))
                try keychain.add(NewItem(label: "later", attributes: ["n": "later"], secret: secret("l")), to: work)
            }
            var bytes = try fixture.bytes("work")
            // 0, 1, the batch and a byte of the record before it, the whole file and a byte
            // more, then lengths far past any file.
            let lengths = [0, 1, UInt64(commit - start + 1), UInt64(commit + 1), UInt64.max, UInt64(Int.max), UInt64(1) << 40]
            let length = lengths[which]
            forgeCommitLength(length, commitAt: commit, in: &bytes)
            try fixture.write(bytes, to: "work")
            if last {
                let keychain = try fixture.keychain()
                #expect(try names(keychain) == ["before"], "length \(length)")
                #expect(try keychain.info(work).recovery?.contains("damaged") == true, "length \(length)")
            } else {
                do {
                    _ = try fixture.keychain().info(work)
                    Issue.record("length \(length): the file opened")
                } catch {
                    #expect(reportsDamage(to: "work.coffer", error), "length \(length): \(error)")
                }
            }
        }
    }

    /// A forged commit record whose fixed-up checksum ends in a zero byte (one in 256 do, so
    /// the test above met one now and then): that zero is the record's last byte, not reserved
    /// space. Taken for reserved space, it left the commit record looking cut short and the
    /// batch was called an unfinished write; it is damage, set aside whole.
    @Test func aForgedCommitRecordWhoseChecksumEndsInAZeroByteIsDamage() throws {
        let fixture = try StoreFixture()
        let (start, commit, end) = try withBatch(fixture, count: 3, acknowledged: false)
        var bytes = try fixture.bytes("work")
        var forged = false
        for k in UInt64(0)..<(1 << 16) where !forged {
            forgeCommitLength((1 << 40) + k, commitAt: commit, in: &bytes)
            forged = bytes[end - 1] == 0
        }
        try #require(forged, "no forged length gave a checksum ending in a zero byte")
        try fixture.write(bytes, to: "work")

        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery?.contains("damaged") == true, "\(fixture.warnings.all)")
        try keychain.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)
        let kept = try #require(FileManager.default.contents(atPath: fixture.path("work") + ".quarantine"))
        #expect(Array(kept).firstRange(of: Array(bytes[start..<end]) + [0x0A]) != nil, "the batch was not set aside whole")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("work") + ".unfinished"))
    }

    /// A commit record whose checksum holds but whose authentication tag does not (made
    /// without the key): the collection opens, but unlocking it reports the file as damaged.
    @Test func aCommitRecordMadeWithoutTheKeyFailsAtUnlock() throws {
        let fixture = try StoreFixture()
        let (_, commit, end) = try withBatch(fixture, count: 3)
        var bytes = try fixture.bytes("work")
        bytes[end - 5] ^= 0x01   // the tag's last byte, just before the CRC
        let crc = Digest.crc32(bytes[(commit + 4)..<(end - 4)])
        for i in 0..<4 { bytes[end - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try fixture.write(bytes, to: "work")
        let keychain = try fixture.keychain()
        #expect(try keychain.info(work).isLocked)
        #expect {
            try keychain.unlock(work, password: password("pw"))
        } throws: { reportsDamage(to: "work.coffer", $0) }
    }

    /// After an unfinished write was set aside, new batches start where the committed
    /// data ends and their commit records vouch for that start, read back by a fresh opening
    /// and by a second store that still held the old tail.
    @Test func batchesAfterRecoveryVouchForTheirStart() throws {
        let fixture = try StoreFixture()
        let (start, commit, _) = try withBatch(fixture, acknowledged: false)
        var bytes = try fixture.bytes("work")
        zero(try wholeSector(in: start..<commit), in: &bytes)
        try fixture.write(bytes, to: "work")

        let stale = try fixture.keychain()
        #expect(try names(stale) == ["before"])
        let writer = try fixture.keychain()
        try writer.unlock(work, password: password("pw"))
        _ = try writer.insertAll(try items("n", 3), into: work)
        #expect(fixture.warnings.all.contains { $0.contains("never acknowledged") }, "\(fixture.warnings.all)")
        // The store that still held the tail writes next: it must catch up, not vouch from its
        // old end.
        _ = try stale.insertAll(try items("m", 2), into: work)
        let reopened = try fixture.keychain()
        #expect(try names(reopened) == ["before", "n0", "n1", "n2", "m0", "m1"])
        #expect(try reopened.info(work).recovery == nil)
    }

    /// A password change (a rewrite keeping live records verbatim: items of batches of
    /// several changes keep their unflagged kind byte, and the batch ends at the new meta
    /// record) reads back; a lost sector in the rewritten file is reported, not cut off.
    @Test func aRewrittenFileReadsBackAndDamageInItIsReported() throws {
        let fixture = try StoreFixture()
        _ = try withBatch(fixture)
        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        let more = try keychain.insertAll(try items("c", 3), into: work)
        _ = try keychain.commit([.update(more[0].item, ItemChanges(label: "c0b")), .remove(more[1].item)], in: work)
        try keychain.changePassword(work, from: password("pw"), to: password("new"))
        let expected = Set(["before", "c0", "c2"]).union((0..<8).map { "b\($0)" })
        #expect(try names(try fixture.keychain(), password: "new") == expected)

        let records = try fixture.records("work")
        let meta = try #require(recordStart(endingAt: records.count, in: records))
        var bytes = try fixture.bytes("work")
        zero(try wholeSector(in: records.count / 3..<meta), in: &bytes)
        try fixture.write(bytes, to: "work")
        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
    }

    // MARK: Files written by 0.3

    /// Item records appended as Coffer 0.3 wrote a batch of several changes: no commit record,
    /// the last item flagged as ending the batch. Returns the file's records before them and
    /// the new records with their starts.
    func legacyBatch(_ fixture: StoreFixture, _ names: [String], secretLength: Int = 1500) throws -> (base: [UInt8], batch: [UInt8], starts: [Int]) {
        let base = try fixture.records("work")
        let log = try CollectionLog(file: "work", bytes: base)
        let key = try DataKey(try #require(try KeySlotsFile.read(directory: fixture.directory, id: work)).open(with: .password(password("pw")), file: "work.keys").0)
        let hasher = try AttributeHasher(lookupKey: log.header.lookupKey)
        let now = UInt64(Date().timeIntervalSince1970)
        var batch: [UInt8] = []
        var starts: [Int] = []
        for (position, name) in names.enumerated() {
            let metadata = ItemMetadata(label: name, attributes: ["n": name], contentType: "text/plain", created: now, modified: now)
            let payload = try ItemPayload.encode(metadata, secret: SecureBytes(Array(String(repeating: "y", count: secretLength).utf8)))
            starts.append(base.count + batch.count)
            batch += try RecordFrame.encode(kind: .item, endsBatch: position == names.count - 1,
                                            sequence: log.nextSequence + UInt64(position), timestamp: now,
                                            itemID: log.nextItemID + UInt64(position),
                                            publicPart: AttributeHasher.encode(hasher.terms(metadata.attributes)),
                                            plaintext: payload, key: key, uuid: log.header.uuid)
        }
        return (base, batch, starts)
    }

    func withLegacyBatch() throws -> (StoreFixture, base: [UInt8], batch: [UInt8], starts: [Int]) {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.add(NewItem(label: "before", attributes: ["n": "before"], secret: secret("s")), to: work)
        let (base, batch, starts) = try legacyBatch(fixture, ["o1", "o2", "o3"])
        return (fixture, base, batch, starts)
    }

    /// A 0.3 batch reads, and a 0.4 batch of several changes appended after it too.
    @Test func aBatchWrittenBy03Reads() throws {
        let (fixture, base, batch, _) = try withLegacyBatch()
        try fixture.write(base + batch + [UInt8](repeating: 0, count: 16 << 10), to: "work")
        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before", "o1", "o2", "o3"])
        _ = try keychain.insertAll(try items("n", 2), into: work)
        let reopened = try fixture.keychain()
        #expect(try names(reopened) == ["before", "o1", "o2", "o3", "n0", "n1"])
        #expect(try reopened.info(work).recovery == nil)
    }

    /// 0.3 crashed between its two flushes: the records before the last arrived, the
    /// last one did not. An unfinished write.
    @Test func a03CrashBetweenItsTwoFlushesIsAnUnfinishedWrite() throws {
        let (fixture, base, batch, starts) = try withLegacyBatch()
        var image = base + batch + [UInt8](repeating: 0, count: 16 << 10)
        zero(starts[2]..<base.count + batch.count, in: &image)
        try fixture.write(image, to: "work")
        let keychain = try fixture.keychain()
        #expect(try names(keychain) == ["before"])
        #expect(try keychain.info(work).recovery == nil)
    }

    /// In a 0.3 batch the last record was written only after the others were durable,
    /// so a lost sector before an intact last record is damage to committed data (no commit
    /// record, so the rule for a batch's own commit record does not apply).
    @Test func aLostSectorBeforeTheLastRecordOfA03BatchIsCorrupt() throws {
        let (fixture, base, batch, starts) = try withLegacyBatch()
        var image = base + batch + [UInt8](repeating: 0, count: 16 << 10)
        zero(try wholeSector(in: starts[0]..<starts[2]), in: &image)
        try fixture.write(image, to: "work")
        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
    }
}
