import CofferCore
import SystemKit

/// How a collection's changes reach the disk: appended in place into reserved space and synced
/// before they count, and compacted into a fresh file once superseded records outweigh live ones.
extension FileCollection {
    /// Writes a batch at the end of the valid log and makes it durable, holding `state` all
    /// along (for the rare writes made while catching up); on failure cuts the file back so
    /// nothing half-written stays behind, and leaves the state as it was.
    func append(_ frames: [UInt8], to s: inout State) throws(CofferError) {
        let write = PendingWrite(file: s.file, start: s.log.validEnd, observedSize: s.observedSize,
                                 records: Records(frames: frames))
        try finish(write, outcome: write.perform(), in: &s)
    }

    /// Appends the records `prepare` makes (with what it returns), durably, holding `state`
    /// only to prepare them and to take them in: during the disk flush, this process's readers
    /// go on with the collection as it was before. Other writers wait (this process's on
    /// `writers`, others on the exclusive file lock) until the records are taken in and the
    /// lock let go.
    ///
    /// `acknowledge` gets what `prepare` returned once the records are durable and taken in,
    /// before the file lock is let go and any compaction: whoever waits for the write (a
    /// client's reply) waits for neither. It runs holding `writers` and the file lock, so it
    /// must not write to this collection or open its file another way.
    func withAppend<R>(_ prepare: (inout State) throws(CofferError) -> (Records, R),
                       acknowledge: (R) -> Void = { _ in }) throws(CofferError) -> R {
        try writers.withLock { _ throws(CofferError) -> R in
            let (write, result) = try state.withLock { s throws(CofferError) -> (PendingWrite, R) in
                try s.lockFile.lock(.exclusive)
                do throws(CofferError) {
                    try refresh(&s, holdingLock: true)
                    // Every change needs the key (a locked collection's fails here, as it
                    // would in `prepare`), and setting aside needs it to carry the counters on.
                    if s.log.needsSettingAside { try setAsideTornTail(&s, key: try key(of: s)) }
                    let (records, result) = try prepare(&s)
                    s.isAppending = true
                    return (PendingWrite(file: s.file, start: s.log.validEnd, observedSize: s.observedSize, records: records), result)
                } catch {
                    releaseWriteLock(&s, caughtUp: false)
                    throw error
                }
            }
            beforeFlush()
            let outcome = write.perform()
            try state.withLock { s throws(CofferError) in
                do throws(CofferError) {
                    try finish(write, outcome: outcome, in: &s)
                } catch {
                    s.isAppending = false
                    releaseWriteLock(&s, caughtUp: false)
                    throw error
                }
            }
            // The state now holds all the file does, and no other process can write it: while
            // `isAppending` stays set, readers use the state without looking at the file.
            acknowledge(result)
            state.withLock { s in
                defer {
                    s.isAppending = false
                    releaseWriteLock(&s, caughtUp: true)
                }
                compactIfWorthIt(&s)
            }
            return result
        }
    }

    /// Takes in a write that succeeded, or notes the file's size after one that failed.
    private func finish(_ write: PendingWrite, outcome: Result<Int, CofferError>, in s: inout State) throws(CofferError) {
        switch outcome {
        case .success(let size):
            do throws(CofferError) {
                try s.log.append(write.records.frames)
            } catch {
                // Records the log refuses must not stay behind to be read as committed later.
                try? s.file.truncate(to: write.start)
                try? s.file.sync()
                s.observedSize = (try? s.file.status().size) ?? -1
                throw error
            }
            s.observedSize = size
            markAcknowledged(&s)
            // What the records say of items the cache holds is known already: kept, not
            // decrypted again. Items only written are not added (the cache holds what is read).
            for (item, metadata) in write.records.written where s.metadataCache[item] != nil {
                s.metadataCache[item] = metadata
            }
        case .failure(let error):
            s.observedSize = (try? s.file.status().size) ?? -1
            throw error
        }
    }

    /// Records in the acknowledgement mark how far the changes in the file reach, once they are
    /// durable and before any of them is acknowledged (see `AcknowledgementMark`). A mark that
    /// cannot be written costs no change: damage to the changes after the last mark written is
    /// then judged by the file's bytes alone, as for a file from before the mark.
    func markAcknowledged(_ s: inout State) {
        let mark = s.log.mark
        guard mark != s.log.acknowledged else { return }
        do {
            try mark.write(to: s.lockFile)
            s.log.note(mark)
        } catch {
            warn("\(path): the change is saved, but how far the acknowledged changes reach could not be noted: \(error); until a later change notes it, damage to this change would be judged by the file's bytes alone")
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
            var log = try CollectionLog(file: path, bytes: image)
            log.note(s.log.acknowledged)
            let (identity, size) = try file.status()
            // The live records are the same, byte for byte: the metadata cached from them holds.
            (s.file, s.log, s.identity, s.observedSize) = (file, log, identity, size)
            s.watched = Self.watchSees(path)
            markAcknowledged(&s)
        } catch {
            try? PosixFile.remove(temporary)
            throw error
        }
    }
}

/// Records for the end of a collection's file: one batch, whose last record commits it.
struct Records {
    var frames: [UInt8]
    /// The metadata the records give their items (nil for an item they remove).
    var written: [(ItemID, ItemMetadata?)] = []
}

/// A batch of records being written and made durable at `start` of `file`, which nothing else
/// touches meanwhile (its writer holds `writers` and the exclusive file lock, and readers leave
/// the file alone while `isAppending`).
struct PendingWrite: Sendable {
    let file: PosixFile
    let start: Int
    let observedSize: Int
    let records: Records

    /// Writes and syncs the records: the file's size after, or the error once the file is cut
    /// back to `start` so that nothing half-written stays behind.
    func perform() -> Result<Int, CofferError> {
        let end = start + records.frames.count
        guard end > observedSize else { return attempt(records.frames, size: observedSize) }
        // Past the reserved space the file grows by a zero-filled step in the same write; if
        // that does not fit (a full disk), the records alone are tried. (A failure inside the
        // reserved space is not retried.)
        let grown = FileCollection.reservedSize(for: end)
        let withReserve = attempt(records.frames + [UInt8](repeating: 0, count: grown - end), size: grown)
        if case .failure = withReserve { return attempt(records.frames, size: end) }
        return withReserve
    }

    /// Writes `image` (the records, maybe followed by zeros) at `start` and syncs it, in one
    /// go: a crash meanwhile may leave any of its pages on disk, and the batch's last record
    /// (see `RecordFrame.Kind.commit`) lets a reader tell that from committed data.
    private func attempt(_ image: [UInt8], size: Int) -> Result<Int, CofferError> {
        do throws(CofferError) {
            try file.write(image, at: start)
            try file.sync()
            return .success(size)
        } catch {
            try? file.truncate(to: start)
            try? file.sync()
            return .failure(error)
        }
    }
}
