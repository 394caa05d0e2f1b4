import CofferCore
import CofferCrypto
import CofferStore

/// Runs one fuzz input through the store's parsers, as `FileCollection` uses them: the whole
/// input as a key slots file, and as a collection file (header, records, batches, torn tail, reserved space, attribute
/// index, meta and removal records), read at once and read in two steps as a growing file is;
/// then, for files sealed with the seed password, unlocked, verified and every item opened.
/// The file is read a second time with every record checksum made valid, and the input also
/// goes straight to the attribute-index, item-payload, access-rules and sync-record decoders, which in a
/// file sit behind a checksum or an authentication tag.
///
/// Besides crashes, it traps when a parsed log breaks a promise the store relies on: its valid
/// end lies inside the image, and every live entry reads back as an item record with its id.
public enum StoreFileHarness {
    /// The password of the seed files; only files with the fast test KDF parameters are
    /// unlocked (a mutated header could otherwise ask Argon2 for gigabytes).
    static let password = "fuzz"

    public static func run(_ bytes: [UInt8]) {
        _ = AttributeHasher.decode(bytes[...])
        if let access = AccessCoding.decode(bytes) {
            expect(AccessCoding.decode(AccessCoding.encode(access)) == access, "access rules do not survive encoding")
        }
        if let payload = try? SecureBytes(bytes) { readPayload(payload) }
        if let slots = try? KeySlotsFile.decode(bytes, file: "fuzz.keys") {
            expect((try? KeySlotsFile.decode(slots.encoded(), file: "fuzz.keys"))?.slots == slots.slots, "key slots do not survive encoding")
        }
        if let record = try? SyncRecord(decoding: bytes) {
            expect((try? SyncRecord(decoding: record.encoded())) == record, "a sync record does not survive encoding")
        }
        readFile(bytes)
        if let fixed = withValidRecordChecksums(bytes), fixed != bytes { readFile(fixed) }
    }

    private static func readFile(_ bytes: [UInt8]) {
        guard let log = try? CollectionLog(file: "fuzz.coffer", bytes: bytes) else { return }
        check(log)
        readInTwoSteps(bytes, whole: log)
        unlockAndRead(log)
    }

    /// `bytes` with the checksum of every record after the header made valid. A checksum only
    /// tells a torn write from a whole one: a buggy or hostile writer leaves valid ones, and a
    /// mutation rarely fixes one at the same time as it changes a field.
    private static func withValidRecordChecksums(_ bytes: [UInt8]) -> [UInt8]? {
        guard let (_, headerLength) = try? StoreHeader.decode(bytes, file: "fuzz.coffer") else { return nil }
        var fixed = bytes
        var offset = headerLength
        while case .frame(let frame) = RecordFrame.parse(fixed, at: offset, end: fixed.count, checksum: false) {
            offset = frame.offset + frame.length
            var checksum = ByteWriter(capacity: 4)
            checksum.u32(Digest.crc32(fixed[(frame.offset + 4)..<(offset - 4)]))
            fixed.replaceSubrange((offset - 4)..<offset, with: checksum.bytes)
        }
        return fixed
    }

    private static func check(_ log: CollectionLog) {
        expect(log.headerLength <= log.validEnd && log.validEnd <= log.bytes.count,
               "valid end \(log.validEnd) outside \(log.headerLength)...\(log.bytes.count)")
        for (item, entry) in log.entries {
            guard let frame = log.frame(of: item) else {
                expect(false, "live item \(item) at byte \(entry.offset) does not read back")
                return
            }
            expect(frame.kind == .item && frame.itemID == item, "entry of item \(item) holds another record")
        }
    }

    /// Reads the first half, then appends the rest from the valid end on, as `FileCollection`
    /// catches up with a file another process appended to; where both reads succeed they agree.
    private static func readInTwoSteps(_ bytes: [UInt8], whole: CollectionLog) {
        guard var log = try? CollectionLog(file: "fuzz.coffer", bytes: Array(bytes[..<(bytes.count / 2)])) else { return }
        guard (try? log.append(Array(bytes[log.validEnd...]))) != nil else { return }
        check(log)
        expect(log.validEnd == whole.validEnd && log.label == whole.label
               && log.entries.mapValues(\.offset) == whole.entries.mapValues(\.offset)
               && log.nextItemID == whole.nextItemID && log.nextSequence == whole.nextSequence,
               "reading in two steps differs from reading at once")
        log.dropTornTail()
    }

    private static func unlockAndRead(_ log: CollectionLog) {
        // Seed files from before key slots hold their password's slot in the header.
        guard case .password(let kdf, _, _, _) = log.header.keys, kdf == .testing,
              let password = try? SecureBytes(Array(password.utf8)),
              let key = try? DataKey(log.header.openDataKey(password: password)) else { return }
        _ = try? log.verify(with: key, items: false)
        _ = try? log.verify(with: key, items: true)
        if let meta = log.meta, case .frame(let frame) = RecordFrame.parse(log.bytes, at: meta.offset, end: log.validEnd),
           let sealed = try? frame.open(in: log.bytes, key: key, uuid: log.header.uuid) {
            _ = AccessCoding.decode(sealed.unprotectedArray(0..<sealed.count))
        }
        for item in log.entries.keys {
            guard let frame = log.frame(of: item),
                  let payload = try? frame.open(in: log.bytes, key: key, uuid: log.header.uuid) else { continue }
            readPayload(payload)
        }
    }

    private static func readPayload(_ payload: SecureBytes) {
        _ = try? ItemPayload.metadata(from: payload)
        _ = try? ItemPayload.secret(cutFrom: payload)   // last: it cuts the payload down
    }
}
