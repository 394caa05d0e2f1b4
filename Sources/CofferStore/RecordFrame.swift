import CofferCore
import CofferCrypto

/// One record of the append-only log that follows the header.
///
/// ```
/// u32 length of what follows
/// u8  kind (low 7 bits) | 0x80 on the last record of a committed batch
/// u64 sequence number (strictly increasing over item records; 0 on meta records)
/// u64 timestamp (seconds)
/// u64 item id (0 on meta records)
/// u32+bytes public part   item: 16-byte attribute hashes; meta: next item id, next seq, label;
///                         commit: u64 length and SHA-256 of the batch's records before it
/// 12  nonce
/// u32+bytes sealed part   AES-256-GCM under the data key; associated data = collection uuid +
///                         every byte from kind to the end of the public part
/// u32 CRC-32 of everything from kind on (finds torn writes while locked)
/// ```
/// A batch counts only when its last record (flag 0x80) is complete; a crash mid-batch leaves
/// a tail that is dropped whole. A batch of several changes ends with a commit record that
/// vouches for the records before it (see `Kind.commit`), so that the whole batch can be
/// written and flushed at once.
package struct RecordFrame {
    package enum Kind: UInt8 {
        case item = 1
        case removal = 2
        case meta = 3
        /// Ends a batch of several records: it states where the batch starts and a digest of
        /// the batch's records before it (SHA-256: a CRC-32 over records that each end in
        /// their own CRC-32 is the same for any records of the same lengths). Pages written
        /// together may reach the disk in any order, so a crash during the batch's flush can
        /// leave this record intact after a record that never arrived; it tells that
        /// unfinished write apart from damage to records committed earlier.
        case commit = 4
    }

    static let batchEndFlag: UInt8 = 0x80
    static let maxLength = 16 << 20
    /// The shortest a frame can be: every fixed field, an empty public part and an empty
    /// sealed payload (its tag alone).
    static let minimumLength = 4 + 1 + 8 + 8 + 8 + 4 + 12 + 4 + 16 + 4

    package var kind: Kind
    var endsBatch: Bool
    var sequence: UInt64
    var timestamp: UInt64
    package var itemID: ItemID
    /// Positions inside the buffer the frame was parsed from.
    var publicRange: Range<Int>
    var nonceRange: Range<Int>
    var sealedRange: Range<Int>
    var authenticatedRange: Range<Int>
    /// Where the frame starts and its total length.
    package var offset: Int
    package var length: Int

    /// Builds and seals a frame; `plaintext` nil seals an empty payload (authentication only).
    static func encode(kind: Kind, endsBatch: Bool, sequence: UInt64, timestamp: UInt64, itemID: ItemID,
                       publicPart: [UInt8], plaintext: SecureBytes?, key: DataKey,
                       uuid: [UInt8]) throws(CofferError) -> [UInt8] {
        var body = ByteWriter(capacity: 64 + publicPart.count + (plaintext?.count ?? 0))
        body.u8(kind.rawValue | (endsBatch ? batchEndFlag : 0))
        body.u64(sequence)
        body.u64(timestamp)
        body.u64(itemID)
        body.field(publicPart)
        let nonce = Random.nonce(AESGCM.nonceLength)
        let sealed: [UInt8] = try CofferError.catching {
            if let plaintext {
                return try key.cipher.seal(plaintext, nonce: nonce, aad: uuid + body.bytes)
            }
            return try key.cipher.seal([UInt8](), nonce: nonce, aad: uuid + body.bytes)
        }
        body.raw(nonce)
        body.field(sealed)
        body.u32(Digest.crc32(body.bytes[...]))
        var frame = ByteWriter(capacity: body.bytes.count + 4)
        frame.u32(UInt32(body.bytes.count))
        frame.raw(body.bytes)
        return frame.bytes
    }

    /// The public part of a commit record for a batch whose records before it are `records`.
    static func commitPublicPart(vouchingFor records: ArraySlice<UInt8>) -> [UInt8] {
        var w = ByteWriter()
        w.u64(UInt64(records.count))
        w.raw(Digest.sha256(Array(records)))
        return w.bytes
    }

    /// Where the batch this commit record ends starts, as the record states it, or nil if the
    /// record states none (another kind, a malformed public part, or a start before `minimum`).
    func vouchedBatchStart(in bytes: [UInt8], minimum: Int) -> Int? {
        guard kind == .commit else { return nil }
        var r = ByteReader(bytes, from: publicRange.lowerBound, to: publicRange.upperBound)
        guard let length = try? r.u64(), length > 0, length <= UInt64(offset - minimum) else { return nil }
        return offset - Int(length)
    }

    /// Whether this is a commit record for the intact batch of records from `start` up to it.
    func vouchesForBatch(from start: Int, in bytes: [UInt8]) -> Bool {
        guard vouchedBatchStart(in: bytes, minimum: start) == start, publicRange.count == 8 + 32 else { return false }
        let digest = bytes[publicRange.lowerBound + 8..<publicRange.upperBound]
        return digest.elementsEqual(Digest.sha256(Array(bytes[start..<offset])))
    }

    package enum ParseResult {
        case frame(RecordFrame)
        /// The bytes from here on do not hold a whole frame (a torn write at the tail).
        case incomplete
        /// A whole frame is there but damaged.
        case damaged(String)
    }

    /// Parses the frame at `offset` in `bytes[..<end]`. Without `checksum` the CRC is not
    /// computed again (for frames already checked when the file was read).
    package static func parse(_ bytes: [UInt8], at offset: Int, end: Int, checksum: Bool = true) -> ParseResult {
        var r = ByteReader(bytes, from: offset, to: end)
        // Once the whole body is there, a field running past its end is damage, not a tail cut short.
        var bodyIsWhole = false
        do {
            let length = Int(try r.u32())
            guard length <= maxLength else { return r.remaining < length ? .incomplete : .damaged("record too long") }
            guard r.remaining >= length else { return .incomplete }
            bodyIsWhole = true
            let bodyStart = r.offset
            let bodyEnd = bodyStart + length
            var b = ByteReader(bytes, from: bodyStart, to: bodyEnd)
            guard length >= 4, !checksum ||
                  Digest.crc32(bytes[bodyStart..<bodyEnd - 4]) == UInt32(bytes[bodyEnd - 4]) | UInt32(bytes[bodyEnd - 3]) << 8
                    | UInt32(bytes[bodyEnd - 2]) << 16 | UInt32(bytes[bodyEnd - 1]) << 24 else {
                return .damaged("record checksum mismatch")
            }
            let kindByte = try b.u8()
            guard let kind = Kind(rawValue: kindByte & ~batchEndFlag) else { return .damaged("unknown record kind") }
            let sequence = try b.u64()
            let timestamp = try b.u64()
            let itemID = try b.u64()
            let publicRange = try b.fieldRange()
            let authenticatedEnd = b.offset
            let nonceStart = b.offset
            _ = try b.raw(AESGCM.nonceLength)
            let sealedRange = try b.fieldRange()
            guard b.remaining == 4, sealedRange.count >= AESGCM.tagLength else { return .damaged("record layout is wrong") }
            return .frame(RecordFrame(kind: kind, endsBatch: kindByte & batchEndFlag != 0, sequence: sequence,
                                      timestamp: timestamp, itemID: itemID, publicRange: publicRange,
                                      nonceRange: nonceStart..<nonceStart + AESGCM.nonceLength,
                                      sealedRange: sealedRange, authenticatedRange: bodyStart..<authenticatedEnd,
                                      offset: offset, length: 4 + length))
        } catch {
            return bodyIsWhole ? .damaged("record layout is wrong") : .incomplete
        }
    }

    /// Verifies and decrypts the sealed part.
    package func open(in bytes: [UInt8], key: DataKey, uuid: [UInt8]) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            try key.cipher.open(bytes[sealedRange], nonce: bytes[nonceRange], aad: uuid[...], bytes[authenticatedRange])
        }
    }
}
