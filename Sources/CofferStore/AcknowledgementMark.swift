import CofferCore
import CofferCrypto

/// How far a collection's acknowledged changes reach: the counters its file had right after
/// the last change written to it (next item id, next sequence number, meta record
/// generation), kept for the file of one uuid in the collection's lock file (`<id>.lock`,
/// which holds nothing else).
///
/// It is what tells acknowledged records lost to damage from a crash in the middle of a write,
/// which the file's tail cannot always tell by itself: what is left of the last committed
/// record when its end is zeroed or cut off looks exactly like what a crash leaves of a record
/// being written, and whole records zeroed look like the free space after the last one. A
/// writer writes its batch into the file and flushes it (`fdatasync`), and only then writes the
/// mark (without a flush of its own) and acknowledges the change. So the mark never claims more
/// than the file durably held: a crash during a write leaves the mark as it was before that
/// write, and a power cut may leave it older still, never newer. Hence the rule:
///
/// - When the verified part of the file ends below the mark (fewer sequence numbers: item or
///   removal records missing; an older meta record: a label or access change missing), records
///   that were written, flushed and acknowledged are gone. That is damage, never an unfinished
///   write, whatever follows the verified part (bytes left of those records, zeros, nothing).
/// - Otherwise nothing acknowledged is missing, and the file's own evidence decides (see
///   `CollectionLog.tornTailIsUnfinishedWrite`).
/// - No item id below the mark's is handed to a new item, even when the records that held the
///   highest ones are gone without a trace.
///
/// A lock file without a valid mark for the file (one written by a Coffer from before the
/// mark, a mark of an earlier collection of the same id, a torn or damaged one) tells nothing:
/// the file's own evidence decides, as it always did.
///
/// ```
/// "COFFACK1"  magic (8)
/// 16  collection uuid (the header's)
/// u64 next item id, u64 next sequence number, u64 meta record generation
/// u32 CRC-32 of all of the above
/// ```
struct AcknowledgementMark: Equatable {
    static let magic = Array("COFFACK1".utf8)
    static let length = 8 + 16 + 3 * 8 + 4

    var uuid: [UInt8]
    var nextItemID: ItemID
    var nextSequence: UInt64
    var metaGeneration: UInt64

    /// The mark for the later of two states of the same file: each counter the greater.
    func merged(with other: AcknowledgementMark?) -> AcknowledgementMark {
        guard let other, other.uuid == uuid else { return self }
        return AcknowledgementMark(uuid: uuid, nextItemID: max(nextItemID, other.nextItemID),
                                   nextSequence: max(nextSequence, other.nextSequence),
                                   metaGeneration: max(metaGeneration, other.metaGeneration))
    }

    var encoded: [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.raw(Self.magic)
        w.raw(uuid)
        w.u64(nextItemID)
        w.u64(nextSequence)
        w.u64(metaGeneration)
        w.u32(Digest.crc32(w.bytes[...]))
        return w.bytes
    }

    /// The mark `bytes` start with, or nil when they hold none (an empty lock file) or a
    /// damaged one: a checksum that fails, or a counter above any a real file reaches
    /// (`CollectionLog.counterLimit`; new ids and records count on from the mark's, and must
    /// not overflow).
    static func decode(_ bytes: [UInt8]) -> AcknowledgementMark? {
        guard bytes.count >= length, bytes.starts(with: magic) else { return nil }
        var r = ByteReader(bytes, from: magic.count, to: length)
        do {
            let uuid = Array(try r.raw(16))
            let mark = AcknowledgementMark(uuid: uuid, nextItemID: try r.u64(), nextSequence: try r.u64(),
                                           metaGeneration: try r.u64())
            guard try r.u32() == Digest.crc32(bytes[..<(length - 4)]),
                  [mark.nextItemID, mark.nextSequence, mark.metaGeneration].allSatisfy({ $0 <= CollectionLog.counterLimit }) else { return nil }
            return mark
        } catch {
            return nil
        }
    }

    /// The mark kept in `lockFile`, if it holds a readable one.
    static func read(from lockFile: PosixFile) -> AcknowledgementMark? {
        (try? lockFile.read(at: 0, count: length)).flatMap(decode)
    }

    /// Writes the mark over the one in `lockFile` (the caller holds the file's exclusive lock),
    /// without flushing it: see the type's description.
    func write(to lockFile: PosixFile) throws(CofferError) {
        try lockFile.write(encoded, at: 0)
    }
}
