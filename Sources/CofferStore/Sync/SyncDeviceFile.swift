import CofferCore
import CofferCrypto
import SystemKit

/// One device's file of changes to a synced collection, in the folder a sync tool carries
/// (`<folder>/<collection uuid>/<device id>.csync`): appended to by that device alone, so a
/// sync tool never sees two writers of one file.
///
/// ```
/// "COFFERSY"  magic (8)
/// u16 format version (1)
/// 16  collection uuid
/// 16  device id
/// u32 generation (0, then one more at each compaction)
/// then records, each:
///   u32 length, then: 12 nonce, AES-256-GCM of (u64 sequence, the record: SyncRecord), tag (16)
/// ```
/// The key is derived from the folder key; each record's associated data is the file's start
/// and the record's position, so a record changed, dropped, reordered or moved into another
/// device's or collection's file, or into another generation of the file, does not open. A
/// record cut short at the end is one still arriving (or cut by a crash): it is left for the
/// next read. A record's sequence is its number in the device's whole history: compaction
/// (a new generation, holding only the records still needed) keeps each record's sequence,
/// so what devices say they have merged (`merged` records) counts in sequences.
package struct SyncDeviceFile: Sendable {
    static let magic: [UInt8] = Array("COFFERSY".utf8)
    static let formatVersion: UInt16 = 1
    static let headerLength = 8 + 2 + 16 + 16 + 4
    static let fileExtension = ".csync"
    /// The largest record accepted: an item's payload (256 KiB of secret, its label and
    /// attributes) and its versions, with room to spare.
    static let maxRecordLength = 1 << 20

    package let path: String
    package let collection: [UInt8]
    package let device: DeviceID
    /// The generation written (`append`, `create`, `rewrite`).
    package let generation: UInt32

    package init(folder: String, collection: [UInt8], device: DeviceID, generation: UInt32 = 0) {
        self.init(path: "\(folder)/\(device)\(Self.fileExtension)", collection: collection, device: device, generation: generation)
    }

    /// The file at `path`, which holds `device`'s changes under another name (a sync tool's
    /// conflicting copy of its file).
    package init(path: String, collection: [UInt8], device: DeviceID, generation: UInt32 = 0) {
        self.path = path
        self.collection = collection
        self.device = device
        self.generation = generation
    }

    /// The start of the file's generation `generation`, which every record's seal covers.
    func header(_ generation: UInt32) -> [UInt8] {
        var w = ByteWriter(capacity: Self.headerLength)
        w.raw(Self.magic)
        w.u16(Self.formatVersion)
        w.raw(collection)
        w.raw(device.bytes)
        w.u32(generation)
        return w.bytes
    }

    /// What a read found: the records that opened, in order, and what stopped it early.
    package struct Contents: Sendable {
        /// The records that opened, each with its sequence.
        package var records: [(sequence: UInt64, record: SyncRecord)] = []
        /// Bytes of the file read through (the header and every whole record that opened).
        package var end = 0
        /// The file's generation (nil: no header yet).
        package var generation: UInt32?
        package var problem: Problem?
    }

    /// Why a read stopped before the end of the file.
    package enum Problem: Equatable, Sendable {
        /// The last record is not all there yet; the next read takes it.
        case incompleteTail
        /// The file is not this device's of this collection, or a record does not open under
        /// the collection's key: damage, or a device that no longer has the key.
        case damaged(String)
    }

    /// Writes a new, empty file (beside, then renamed); an existing one is an error.
    package func create() throws(CofferError) {
        guard try PosixFile.identity(of: path) == nil else { throw .collectionExists(path) }
        try PosixFile.replace(path, with: header(generation))
    }

    /// Appends `records` durably: they are records `first` onwards of this generation, and
    /// `sequence` onwards of the device's history, written at byte `end` (where the last whole
    /// record ends; by default the file's end), and the file cut after them.
    package func append(_ records: [SyncRecord], first: UInt64, sequence: UInt64, at end: Int? = nil,
                        keys: SyncKeys) throws(CofferError) {
        let file = try PosixFile(path: path)
        let (_, size) = try file.status()
        let bytes = try sealed(records.enumerated().map { (sequence + UInt64($0.offset), $0.element) }, first: first, keys: keys)
        let offset = end ?? size
        try file.write(bytes, at: offset)
        if offset + bytes.count < size { try file.truncate(to: offset + bytes.count) }
        try file.sync()
    }

    /// Replaces the file with this generation holding `records` (each with its sequence), in
    /// one step: how a device compacts its own file.
    package func rewrite(_ records: [(sequence: UInt64, record: SyncRecord)], keys: SyncKeys) throws(CofferError) {
        try PosixFile.replace(path, with: header(generation) + (try sealed(records, first: 0, keys: keys)))
    }

    private func sealed(_ records: [(sequence: UInt64, record: SyncRecord)], first: UInt64, keys: SyncKeys) throws(CofferError) -> [UInt8] {
        let header = header(generation)
        var bytes: [UInt8] = []
        for (offset, (sequence, record)) in records.enumerated() {
            let sealed = try keys.seal(record, sequence: sequence, aad: header + Self.position(first + UInt64(offset)))
            var w = ByteWriter(capacity: sealed.count + 4)
            w.u32(UInt32(sealed.count))
            w.raw(sealed)
            bytes += w.bytes
        }
        return bytes
    }

    /// Reads the file from byte `start` (the end of an earlier read, or 0), records `first`
    /// onwards, when its generation is still `generation`; from its start otherwise (it was
    /// compacted since), which `Contents.generation` tells; without `generation`, from `start`. `after`: the sequence of the last
    /// record read before (each record's is greater than the one before it).
    package func read(from start: Int = 0, first: UInt64 = 0, generation expected: UInt32? = nil, after: UInt64? = nil,
                      keys: SyncKeys) throws(CofferError) -> Contents {
        var contents = Contents()
        guard try PosixFile.identity(of: path) != nil else {
            contents.problem = .incompleteTail
            return contents
        }
        guard let file = try PosixFile.openRegularFile(path) else {
            contents.problem = .damaged("it is not a regular file")
            return contents
        }
        let (_, size) = try file.status()
        guard size >= Self.headerLength else {
            contents.problem = .incompleteTail
            return contents
        }
        let head = try file.read(at: 0, count: Self.headerLength)
        var headReader = ByteReader(head, from: Self.headerLength - 4)
        let generation = (try? headReader.u32()) ?? 0
        guard head == header(generation) else {
            contents.problem = .damaged(Array(head[..<8]) == Self.magic ? "it belongs to another collection, device or format version"
                                        : "it is not a Coffer sync file")
            return contents
        }
        contents.generation = generation
        let fromStart = expected.map { $0 != generation } ?? (start == 0)
        var offset = fromStart ? Self.headerLength : max(start, Self.headerLength)
        var position = fromStart ? 0 : first
        contents.end = offset
        guard offset <= size else {
            contents.problem = .damaged("it is shorter than when it was read before: it went back")
            return contents
        }
        // Read in pieces of a megabyte at most (and one record): what a read holds in memory
        // does not grow with the file, however large someone made it.
        var buffer = Window()
        while offset < size {
            guard let lengthBytes = try buffer.bytes(at: offset, count: 4, of: file, size: size) else {
                contents.problem = .incompleteTail
                break
            }
            var lengthReader = ByteReader(Array(lengthBytes))
            let length = Int((try? lengthReader.u32()) ?? 0)
            guard (AESGCM.nonceLength + AESGCM.tagLength...Self.maxRecordLength).contains(length) else {
                contents.problem = .damaged("record \(position) claims \(length) bytes")
                break
            }
            guard let sealed = try buffer.bytes(at: offset + 4, count: length, of: file, size: size) else {
                contents.problem = .incompleteTail
                break
            }
            do throws(CofferError) {
                let (sequence, record) = try keys.open(sealed, aad: head + Self.position(position))
                // Sequences only grow, and compaction only drops records: never below the position.
                let previous = contents.records.last?.sequence ?? (fromStart ? nil : after)
                guard sequence >= position, previous.map({ sequence > $0 }) ?? true else {
                    contents.problem = .damaged("record \(position) is out of order")
                    break
                }
                contents.records.append((sequence, record))
            } catch {
                contents.problem = .damaged("record \(position) does not open under the collection's key (\(error))")
                break
            }
            offset += 4 + length
            position += 1
            contents.end = offset
        }
        return contents
    }

    /// The part of a file last read, and more of it when asked for what it does not hold.
    private struct Window {
        var start = 0
        var bytes: [UInt8] = []

        /// `count` bytes at `offset`, or nil when the file (`size` bytes) ends before them.
        mutating func bytes(at offset: Int, count: Int, of file: PosixFile, size: Int) throws(CofferError) -> ArraySlice<UInt8>? {
            guard offset + count <= size else { return nil }
            if offset < start || offset + count > start + bytes.count {
                start = offset
                bytes = try file.read(at: offset, count: min(size - offset, max(count, 1 << 20)))
                guard bytes.count >= count else { return nil }
            }
            return bytes[(offset - start)..<(offset - start + count)]
        }
    }

    private static func position(_ index: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.u64(index)
        return w.bytes
    }
}
