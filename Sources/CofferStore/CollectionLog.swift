import CofferCore
import CofferCrypto

/// The in-memory image of one collection file and everything derived from it by reading the
/// public parts of its records: live items, the attribute index, label, counters. Building it
/// needs no key, so a locked collection can be opened and searched.
package struct CollectionLog {
    package struct Entry {
        package var offset: Int
        var length: Int
        var timestamp: UInt64
    }

    let file: String
    package private(set) var bytes: [UInt8]
    package let header: StoreHeader
    package let headerLength: Int
    /// Bytes up to the end of the last complete batch.
    package private(set) var validEnd: Int
    package private(set) var entries: [ItemID: Entry] = [:]
    private(set) var index = AttributeIndex<AttributeTerm>()
    package private(set) var label = ""
    private(set) var modified: UInt64
    package private(set) var nextItemID: ItemID = 1
    package private(set) var nextSequence: UInt64 = 1
    private(set) var liveBytes = 0
    private(set) var deadBytes = 0
    /// The current meta record (label, counters, and sealed access rules).
    package private(set) var meta: Entry?
    /// The current meta record's generation (see `metaPublicPart`).
    private(set) var metaGeneration: UInt64 = 0
    /// How many meta records older than the current one were found after it (and ignored).
    private(set) var staleMetaRecords = 0
    /// Where every removal, meta and commit record of the file starts: records whose effect
    /// (an item gone, a label, a batch that counts) is applied from their public part, so they
    /// are verified with the key at unlock and before compaction makes them permanent.
    private(set) var controlRecordOffsets: [Int] = []
    /// How far the changes acknowledged for this file reach, from its acknowledgement mark
    /// (see `AcknowledgementMark`); nil when there is none for it.
    private(set) var acknowledged: AcknowledgementMark?

    /// Parses a whole file image. Reserved space (zeros after the last record) is dropped from
    /// the image; a torn tail is left out of `validEnd` (the caller warns and truncates it on
    /// its next write); any other damage throws `storeCorrupt`.
    package init(file: String, bytes: [UInt8]) throws(CofferError) {
        self.file = file
        self.bytes = bytes
        (header, headerLength) = try StoreHeader.decode(bytes, file: file)
        validEnd = headerLength
        let expectedItems = bytes.count / 256
        entries.reserveCapacity(expectedItems)
        index = AttributeIndex(expectedItems: expectedItems)
        modified = header.created
        try ingest(upTo: bytes.count)
    }

    /// Above any item id or sequence number a real file reaches (one per change, for ever), and
    /// far enough below `UInt64.max` that the ids skipped after a damaged tail cannot overflow.
    static let counterLimit: UInt64 = 1 << 62

    /// How many bytes past `validEnd` the image holds that are not a complete batch.
    var tornBytes: Int { bytes.count - validEnd }

    /// Takes in the collection's acknowledgement mark (one for another file, by its uuid, is
    /// ignored): from now on no item id below the mark's is handed out, and `lostRecords`
    /// counts what the mark has that the verified log lacks.
    mutating func note(_ mark: AcknowledgementMark?) {
        guard let mark, mark.uuid == header.uuid else { return }
        acknowledged = mark.merged(with: acknowledged)
        nextItemID = max(nextItemID, mark.nextItemID)
    }

    /// How many records that were acknowledged the verified log lacks: item and removal
    /// records (one sequence number each) and meta records (one generation each). 0 without
    /// an acknowledgement mark.
    var lostRecords: UInt64 {
        guard let acknowledged else { return 0 }
        func shortfall(_ reached: UInt64, _ acknowledged: UInt64) -> UInt64 { acknowledged > reached ? acknowledged - reached : 0 }
        return shortfall(nextSequence, acknowledged.nextSequence) + shortfall(metaGeneration, acknowledged.metaGeneration)
    }

    /// Whether the next change must first set something aside: bytes after the last complete
    /// batch, or the loss of acknowledged records (see `FileCollection.setAsideTornTail`).
    var needsSettingAside: Bool { tornBytes > 0 || lostRecords > 0 }

    /// The acknowledgement mark for what the log holds now (never below the one noted).
    var mark: AcknowledgementMark {
        AcknowledgementMark(uuid: header.uuid, nextItemID: nextItemID, nextSequence: nextSequence,
                            metaGeneration: metaGeneration).merged(with: acknowledged)
    }

    var liveFrames: [Entry] {
        entries.values.sorted { $0.offset < $1.offset }
    }

    /// Appends `more` (bytes the file gained) and parses them.
    package mutating func append(_ more: [UInt8]) throws(CofferError) {
        bytes.removeLast(bytes.count - validEnd)
        bytes.append(contentsOf: more)
        try ingest(upTo: bytes.count)
    }

    /// Forgets a torn tail (after it was set aside and truncated from the file), and makes sure
    /// no item id it might have held is ever used again: item ids only grow, and each record
    /// takes at least `RecordFrame.minimumLength` bytes. The counters also move past the
    /// acknowledgement mark's, so that the next meta record carries them and the loss of what
    /// was acknowledged (set aside with the tail) is not counted again.
    package mutating func dropTornTail() {
        nextItemID += UInt64(tornBytes / RecordFrame.minimumLength + 1)
        if let acknowledged {
            nextItemID = max(nextItemID, acknowledged.nextItemID)
            nextSequence = max(nextSequence, acknowledged.nextSequence)
            metaGeneration = max(metaGeneration, acknowledged.metaGeneration)
        }
        bytes.removeLast(bytes.count - validEnd)
    }

    /// Whether the bytes after the last committed batch are what a crash leaves of a write in
    /// progress, rather than damage to committed data. Never when records that were
    /// acknowledged are missing (`lostRecords`, see `AcknowledgementMark`): a crash only ever
    /// interrupts a write that was not acknowledged yet. Otherwise the bytes themselves tell. A
    /// writer puts a batch into zero-filled space and flushes it; it commits with the batch's
    /// last record, which for a batch of several changes is a commit record vouching for the
    /// others. Pages reach the disk in any order, so an interrupted write is intact records of
    /// the batch and records that run past what reached the disk or hold a 512-byte sector that
    /// never did (still zero), maybe followed by the batch's intact commit record. Anything
    /// else, such as a complete record whose checksum fails, or intact records their commit
    /// record does not vouch for, is damage.
    var tornTailIsUnfinishedWrite: Bool {
        guard lostRecords == 0 else { return false }
        var offset = validEnd
        while offset < bytes.count {
            switch RecordFrame.parse(bytes, at: offset, end: bytes.count) {
            case .frame(let frame):
                if frame.endsBatch, frame.kind == .commit, !frame.vouchesForBatch(from: validEnd, in: bytes) { return false }
                offset += frame.length
            case .incomplete:
                // A record running past what reached the disk, unless a batch's end follows:
                // then its length grew, which a sector lost (zeros) never does.
                return firstBatchEnd(from: offset + 1, end: bytes.count) == nil || holdsLostSector(from: offset, end: bytes.count)
            case .damaged:
                return holdsLostSector(from: offset, end: bytes.count)
            }
        }
        return true
    }

    /// Whether a 512-byte sector that never reached the disk shows in `start..<end`: a part
    /// of it there, at least a length word long, is all zeros. (Records never hold 512 zeros
    /// in a row, and `start` is a record's start, whose length word is never zero.) The
    /// batch's first sector also holds committed bytes before it, so there the part up to the
    /// sector's end counts however short it is.
    private func holdsLostSector(from start: Int, end: Int) -> Bool {
        let sector = 512
        var lower = start
        while lower < end {
            let upper = min(end, (lower / sector + 1) * sector)
            let shortest = lower == validEnd && upper % sector == 0 ? 1 : 4
            if upper - lower >= shortest, Self.isReservedSpace(bytes, from: lower, end: upper) { return true }
            lower = upper
        }
        return false
    }

    /// The live record of `item` (checked when it was read from the file; the image never
    /// changes below `validEnd`).
    package func frame(of item: ItemID) -> RecordFrame? {
        guard let entry = entries[item],
              case .frame(let frame) = RecordFrame.parse(bytes, at: entry.offset, end: validEnd, checksum: false) else { return nil }
        return frame
    }

    /// The public part of `item`'s live record (its attribute terms).
    func publicPart(of item: ItemID) -> [UInt8]? {
        frame(of: item).map { Array(bytes[$0.publicRange]) }
    }

    /// Checks the authentication tag of every removal and meta record, and with `items` of
    /// every live item record too; throws `storeCorrupt` at the first that fails.
    package func verify(with key: DataKey, items: Bool) throws(CofferError) {
        var offsets = controlRecordOffsets
        if items { offsets += entries.values.map(\.offset) }
        for offset in offsets {
            guard case .frame(let frame) = RecordFrame.parse(bytes, at: offset, end: validEnd) else {
                throw corrupt("record at byte \(offset) cannot be read back")
            }
            do {
                _ = try frame.open(in: bytes, key: key, uuid: header.uuid)
            } catch {
                throw corrupt("record at byte \(offset) failed authentication")
            }
        }
    }

    /// The public part of a meta record: `u64 next item id, u64 next sequence, label, u64
    /// generation`. The generation (absent, i.e. 0, in files from before access rules) grows by
    /// one with each meta record written, so an older one copied to the end of the file (to
    /// bring back a revoked grant or an earlier policy) is recognised and ignored.
    static func metaPublicPart(nextItemID: ItemID, nextSequence: UInt64, label: String, generation: UInt64) -> [UInt8] {
        var w = ByteWriter()
        w.u64(nextItemID)
        w.u64(nextSequence)
        w.field(Array(label.utf8))
        w.u64(generation)
        return w.bytes
    }

    // MARK: Parsing

    private func corrupt(_ why: String) -> CofferError { .storeCorrupt(file: file, reason: why) }

    private mutating func ingest(upTo end: Int) throws(CofferError) {
        var offset = validEnd
        var batch: [RecordFrame] = []
        var lastSequence = nextSequence - 1
        while offset < end {
            if Self.isReservedSpace(bytes, from: offset, end: end) {
                bytes.removeLast(end - offset)
                return
            }
            switch RecordFrame.parse(bytes, at: offset, end: end) {
            case .incomplete:
                guard let reach = unfinishedWriteReach(at: offset, end: end) else {
                    throw corrupt("record at byte \(offset) has a damaged length")
                }
                dropReservedSpaceAfterTornTail(keeping: reach)
                return
            case .damaged(let why):
                guard let reach = unfinishedWriteReach(at: offset, end: end) else { throw corrupt("\(why) at byte \(offset)") }
                dropReservedSpaceAfterTornTail(keeping: max(reach, damagedRecordEnd(at: offset)))
                return
            case .frame(let frame):
                if frame.kind == .item || frame.kind == .removal {
                    guard frame.sequence > lastSequence else {
                        throw corrupt("records out of order at byte \(offset)")
                    }
                    lastSequence = frame.sequence
                }
                batch.append(frame)
                offset += frame.length
                guard frame.endsBatch else { continue }
                if frame.kind == .commit, !frame.vouchesForBatch(from: validEnd, in: bytes) {
                    // Intact records their commit record does not vouch for: the batch is
                    // damage, kept out of the log like a torn tail if nothing follows it.
                    guard Self.isReservedSpace(bytes, from: offset, end: end) else {
                        throw corrupt("batch at byte \(validEnd) does not match its commit record")
                    }
                    dropReservedSpaceAfterTornTail(keeping: offset)
                    return
                }
                for frame in batch { try apply(frame) }
                batch.removeAll(keepingCapacity: true)
                validEnd = offset
            }
        }
    }

    /// Whether damage at `offset`, inside the batch that starts at `validEnd`, may be what a
    /// crash left of that batch's write rather than damage to committed data, and if so how far
    /// the write's records reach (`offset`, or the end of the commit record found). It may be
    /// when no intact record that ends a batch follows it, or when the first one that does is
    /// this batch's own commit record and only zeros follow that: the batch was written and
    /// flushed in one go, and never acknowledged unless the flush completed. Anything written
    /// after its commit record shows that the flush did complete (a writer writes there only
    /// afterwards). Nil: damage to committed data.
    private func unfinishedWriteReach(at offset: Int, end: Int) -> Int? {
        guard let next = firstBatchEnd(from: offset + 1, end: end) else { return offset }
        guard next.vouchedBatchStart(in: bytes, minimum: validEnd) == validEnd,
              Self.isReservedSpace(bytes, from: next.offset + next.length, end: end) else { return nil }
        return next.offset + next.length
    }

    /// Leaves the zeros after a torn write out of the image, so that `tornBytes` counts only
    /// what the write left. The tail's records up to `recordsEnd` stay whole even when they end
    /// in zeros (a checksum does one time in 256): cut there, the last of them would read as
    /// cut short, which `tornTailIsUnfinishedWrite` takes for an unfinished write even when the
    /// record is damage, and the bytes set aside would lack its end.
    private mutating func dropReservedSpaceAfterTornTail(keeping recordsEnd: Int) {
        let keep = max(validEnd, recordsEnd, (bytes.lastIndex { $0 != 0 } ?? 0) + 1)
        bytes.removeLast(bytes.count - keep)
    }

    /// Where the damaged record at `offset` ends by its length word, when the file's last
    /// non-zero byte lies inside its checksum (its last 4 bytes) and the zeros after it are the
    /// checksum's own (one in 256 ends in a zero byte): the checksum matches the record whole
    /// (the record is malformed inside), what is left of it does not match, or no sector starts
    /// among the zeros. Then the record is damage, whole. Otherwise `offset`: more zeros than
    /// that are no checksum's, a damaged record's length word may itself be damaged, and a
    /// checksum that matches its record up to zeros where it should not have them, from a
    /// sector's start on, lost its end in a sector that never reached the disk (an unfinished
    /// write).
    private func damagedRecordEnd(at offset: Int) -> Int {
        let stated = offset + 4 + (Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24)
        let written = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
        guard stated <= bytes.count, stated - 4 > offset + 4, written > stated - 4, written <= stated else { return offset }
        let checksum = Digest.crc32(bytes[(offset + 4)..<(stated - 4)])
        func matches(_ index: Int) -> Bool { bytes[index] == UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index - (stated - 4)))) }
        let sectorStartsInZeros = (written + 511) / 512 * 512 < stated
        let lostItsEnd = sectorStartsInZeros && ((stated - 4)..<written).allSatisfy(matches) && !((stated - 4)..<stated).allSatisfy(matches)
        return lostItsEnd ? offset : stated
    }

    /// Whether `from..<end` is the zero-filled space a writer reserved past the last record.
    static func isReservedSpace(_ bytes: [UInt8], from start: Int, end: Int) -> Bool {
        bytes[start..<end].allSatisfy { $0 == 0 }
    }

    /// The first intact record that ends a batch starting anywhere in `from..<end`. Every
    /// offset is tried, since a damaged length cannot tell where the next record starts; the
    /// kind byte rules out most offsets before any checksum is computed.
    private func firstBatchEnd(from start: Int, end: Int) -> RecordFrame? {
        var position = start
        while position + 5 <= end {
            let kind = bytes[position + 4]
            if kind & RecordFrame.batchEndFlag != 0, RecordFrame.Kind(rawValue: kind & ~RecordFrame.batchEndFlag) != nil,
               case .frame(let frame) = RecordFrame.parse(bytes, at: position, end: end), frame.endsBatch {
                return frame
            }
            position += 1
        }
        return nil
    }

    private mutating func apply(_ frame: RecordFrame) throws(CofferError) {
        // Ids and sequence numbers only grow by one: one near the top of the range is damage or
        // forgery (and would overflow the next id or sequence, or the ids a set-aside tail skips).
        guard frame.itemID < Self.counterLimit, frame.sequence < Self.counterLimit else {
            throw corrupt("record at byte \(frame.offset) has an item id or sequence number out of range")
        }
        let entry = Entry(offset: frame.offset, length: frame.length, timestamp: frame.timestamp)
        modified = max(modified, frame.timestamp)
        switch frame.kind {
        case .item:
            guard let terms = AttributeHasher.decode(bytes[frame.publicRange]) else {
                throw corrupt("item record has a malformed attribute index")
            }
            if let old = entries.updateValue(entry, forKey: frame.itemID) { kill(old) }
            index.insert(frame.itemID, terms: terms)
            liveBytes += frame.length
            nextItemID = max(nextItemID, frame.itemID + 1)
            nextSequence = max(nextSequence, frame.sequence + 1)
        case .removal:
            controlRecordOffsets.append(frame.offset)
            if let old = entries.removeValue(forKey: frame.itemID) { kill(old) }
            index.remove(frame.itemID)
            deadBytes += frame.length
            nextSequence = max(nextSequence, frame.sequence + 1)
        case .meta:
            controlRecordOffsets.append(frame.offset)
            var r = ByteReader(bytes, from: frame.publicRange.lowerBound, to: frame.publicRange.upperBound)
            let recordLabel: String
            let generation: UInt64
            do {
                nextItemID = max(nextItemID, try r.u64())
                nextSequence = max(nextSequence, try r.u64())
                guard nextItemID <= Self.counterLimit, nextSequence <= Self.counterLimit else { throw ByteReader.Truncated() }
                recordLabel = String(decoding: bytes[try r.fieldRange()], as: UTF8.self)
                generation = r.remaining == 0 ? 0 : try r.u64()
            } catch {
                throw corrupt("collection record is malformed")
            }
            // Files from before generations have 0 throughout: the last record counts.
            guard meta == nil || generation > metaGeneration || (generation == 0 && metaGeneration == 0) else {
                staleMetaRecords += 1
                deadBytes += frame.length
                return
            }
            if let meta { deadBytes += meta.length }
            meta = entry
            metaGeneration = generation
            label = recordLabel
        case .commit:
            // Its work is done once its batch is taken in.
            controlRecordOffsets.append(frame.offset)
            deadBytes += frame.length
        }
    }

    private mutating func kill(_ entry: Entry) {
        liveBytes -= entry.length
        deadBytes += entry.length
    }
}
