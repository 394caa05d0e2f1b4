import CofferCore
import SystemKit

/// How a collection's changes reach the disk: appended in place into reserved space and synced
/// before they count, and compacted into a fresh file once superseded records outweigh live ones.
extension FileCollection {
    /// Writes a batch at the end of the valid log and makes it durable; on failure cuts the file
    /// back so nothing half-written stays behind, and leaves the state as it was. `lastRecordAt`
    /// is where the batch's last record (the one that marks it committed) starts, when it has
    /// several.
    func append(_ frames: [UInt8], lastRecordAt: Int = 0, to s: inout State) throws(CofferError) {
        let start = s.log.validEnd
        let end = start + frames.count
        // Past the reserved space the file grows by a zero-filled step in the same write; if
        // that does not fit (a full disk), the records alone are tried. (A failure inside the
        // reserved space is not retried.)
        var attempts = [(frames, max(end, s.observedSize))]
        if end > s.observedSize {
            let size = Self.reservedSize(for: end)
            attempts.insert((frames + [UInt8](repeating: 0, count: size - end), size), at: 0)
        }
        for (index, (image, size)) in attempts.enumerated() {
            do throws(CofferError) {
                if lastRecordAt > 0 {
                    // Pages written together may reach the disk in any order: everything before
                    // the committing record is made durable first, so that a crash can never
                    // leave that record on disk without the ones before it.
                    var first = image
                    first.replaceSubrange(lastRecordAt..<frames.count, with: repeatElement(0, count: frames.count - lastRecordAt))
                    try s.file.write(first, at: start)
                    try s.file.sync()
                    try s.file.write(Array(frames[lastRecordAt...]), at: start + lastRecordAt)
                } else {
                    try s.file.write(image, at: start)
                }
                try s.file.sync()
                try s.log.append(frames)
                s.observedSize = size
                return
            } catch {
                // Nothing of the failed write may stay: cut the file back to the last batch.
                try? s.file.truncate(to: start)
                try? s.file.sync()
                s.observedSize = (try? s.file.status().size) ?? -1
                if index == attempts.count - 1 { throw error }
            }
        }
    }

    /// The file size to grow to when records end at `end`: an eighth more (16 KiB to 256 KiB),
    /// rounded up to whole 4 KiB blocks.
    static func reservedSize(for end: Int) -> Int {
        let reserve = min(max(end / 8, 16 << 10), 256 << 10)
        return (end + reserve + 4095) & ~4095
    }

    /// Compacts once superseded records outweigh live ones. The change that triggered it is
    /// already durable, so a failure here (a full disk) is only warned about.
    func compactIfWorthIt(_ s: inout State) {
        guard s.log.deadBytes > max(256 << 10, s.log.liveBytes), let key = s.dataKey else { return }
        do {
            try compact(&s, header: s.log.header, key: key)
        } catch {
            warn("\(path): compaction postponed: \(error)")
        }
    }

    /// Rewrites the file with only its live records (copied verbatim) under `header`, ended by
    /// a fresh meta record, through a temporary file and an atomic rename.
    func compact(_ s: inout State, header: StoreHeader, key: DataKey) throws(CofferError) {
        // What compaction keeps and what it lets go must be authentic: a forged removal would
        // otherwise become permanent, and a forged item record would be re-sealed as genuine.
        try s.log.verify(with: key, items: true)
        let access = try access(in: &s, key: key)
        var image = header.encoded()
        image.reserveCapacity(image.count + s.log.liveBytes + 256)
        for entry in s.log.liveFrames { image += s.log.bytes[entry.offset..<entry.offset + entry.length] }
        image += try metaRecord(label: s.log.label, access: access, in: s, header: header, key: key)
        let temporary = "\(path).compact-\(ProcessControl.currentID)"
        do throws(CofferError) {
            let file = try PosixFile(path: temporary, create: true)
            try file.truncate(to: 0)
            try file.write(image, at: 0)
            try file.sync()
            try PosixFile.rename(temporary, to: path)
            try PosixFile.syncDirectory(directory)
            let log = try CollectionLog(file: path, bytes: image)
            let (identity, size) = try file.status()
            (s.file, s.log, s.identity, s.observedSize) = (file, log, identity, size)
            s.metadataCache = [:]
        } catch {
            try? PosixFile.remove(temporary)
            throw error
        }
    }
}
