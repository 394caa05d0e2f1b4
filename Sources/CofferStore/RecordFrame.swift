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
/// u32+bytes public part   item: 16-byte attribute hashes; meta: next item id, next seq, label
/// 12  nonce
/// u32+bytes sealed part   AES-256-GCM under the data key; associated data = collection uuid +
///                         every byte from kind to the end of the public part
/// u32 CRC-32 of everything from kind on (finds torn writes while locked)
/// ```
/// A batch counts only when its last record (flag 0x80) is complete; a crash mid-batch leaves
/// a tail that is dropped whole.
struct RecordFrame {
    enum Kind: UInt8 {
        case item = 1
        case removal = 2
        case meta = 3
    }

    static let batchEndFlag: UInt8 = 0x80
    static let maxLength = 16 << 20
    /// The shortest a frame can be: every fixed field, an empty public part and an empty
    /// sealed payload (its tag alone).
    static let minimumLength = 4 + 1 + 8 + 8 + 8 + 4 + 12 + 4 + 16 + 4

    var kind: Kind
    var endsBatch: Bool
    var sequence: UInt64
    var timestamp: UInt64
    var itemID: ItemID
    /// Positions inside the buffer the frame was parsed from.
    var publicRange: Range<Int>
    var nonceRange: Range<Int>
    var sealedRange: Range<Int>
    var authenticatedRange: Range<Int>
    /// Where the frame starts and its total length.
    var offset: Int
    var length: Int

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

    enum ParseResult {
        case frame(RecordFrame)
        /// The bytes from here on do not hold a whole frame (a torn write at the tail).
        case incomplete
        /// A whole frame is there but damaged.
        case damaged(String)
    }

    /// Parses the frame at `offset` in `bytes[..<end]`. Without `checksum` the CRC is not
    /// computed again (for frames already checked when the file was read).
    static func parse(_ bytes: [UInt8], at offset: Int, end: Int, checksum: Bool = true) -> ParseResult {
        var r = ByteReader(bytes, from: offset, to: end)
        do {
            let length = Int(try r.u32())
            guard length <= maxLength else { return r.remaining < length ? .incomplete : .damaged("record too long") }
            guard r.remaining >= length else { return .incomplete }
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
            return .incomplete
        }
    }

    /// Verifies and decrypts the sealed part.
    func open(in bytes: [UInt8], key: DataKey, uuid: [UInt8]) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            try key.cipher.open(bytes[sealedRange], nonce: Array(bytes[nonceRange]),
                            aad: uuid + bytes[authenticatedRange])
        }
    }
}
