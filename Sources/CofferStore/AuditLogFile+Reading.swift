import CofferCore
import SystemKit

/// What `AuditLogFile.scan` found besides the events.
public struct AuditLogScan: Sendable {
    /// Lines skipped because they are not whole records: a line torn by a crash or a full
    /// disk, damage, or a record of a newer version of Coffer this one cannot read.
    public var skippedLines = 0
    /// Whether any of the log's files exists.
    public var exists = false
}

extension AuditLogFile {
    /// Hands each event of the log of the store in `directory` to `body`, as written: the
    /// rotated files (oldest first), then the current one, under the rotation lock (shared)
    /// when there is one, changing nothing. The files are read a chunk at a time, so memory
    /// stays flat however large they are. A line that is not a whole record is skipped and
    /// counted, never fatal. Throws `CofferError.io` only when a file exists but cannot be read
    /// (or is a symbolic link, which is not followed).
    public static func scan(directory: String, _ body: (AuditEvent) throws(CofferError) -> Void) throws(CofferError) -> AuditLogScan {
        let lock = try openIfPresent(lockPath(in: directory))
        defer { lock?.close() }
        if let lock {
            do { try lock.lock(.shared) } catch { throw CofferError.io("cannot lock \(lockPath(in: directory)): \(error.reason)") }
        }
        var scan = AuditLogScan()
        let paths = (1...keptGenerations).reversed().map { path(in: directory, generation: $0) } + [path(in: directory)]
        for path in paths {
            guard let file = try openIfPresent(path) else { continue }
            defer { file.close() }
            do {
                guard try file.status().kind == .regular else { throw CofferError.io("\(path) is not a regular file; remove it") }
            } catch let error as Errno {
                throw CofferError.io("cannot read \(path): \(error.reason)")
            } catch let error as CofferError {
                throw error
            } catch {
                throw CofferError.io("cannot read \(path): \(error)")
            }
            scan.exists = true
            var reader = AuditLogRecord.Reader()
            var pending: [UInt8] = []
            while true {
                let chunk: [UInt8]
                do { chunk = try file.read(upTo: Self.readChunk) } catch { throw CofferError.io("cannot read \(path): \(error.reason)") }
                if chunk.isEmpty { break }
                var start = chunk.startIndex
                while let newline = chunk[start...].firstIndex(of: 0x0A) {
                    if pending.isEmpty {
                        try take(chunk[start..<newline], &reader, &scan, body)
                    } else {
                        pending += chunk[start..<newline]
                        try take(pending[...], &reader, &scan, body)
                        pending.removeAll(keepingCapacity: true)
                    }
                    start = newline + 1
                }
                pending += chunk[start...]
            }
            try take(pending[...], &reader, &scan, body)
        }
        return scan
    }

    /// How much of a file is read at a time.
    static let readChunk = 1 << 20

    /// One line: its event to `body`, or counted as skipped unless it is blank.
    private static func take(_ line: ArraySlice<UInt8>, _ reader: inout AuditLogRecord.Reader, _ scan: inout AuditLogScan,
                             _ body: (AuditEvent) throws(CofferError) -> Void) throws(CofferError) {
        if let event = reader.event(fromLine: line) {
            try body(event)
        } else if line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) {
            scan.skippedLines += 1
        }
    }

    /// The file `path` opened for reading (without waiting, should it be a FIFO), or nil when
    /// there is none.
    private static func openIfPresent(_ path: String) throws(CofferError) -> FileDescriptor? {
        do {
            return try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking])
        } catch {
            if error == .noSuchFile { return nil }
            if error == .symbolicLink { throw CofferError.io("\(path) is a symbolic link, which is not followed; remove it") }
            throw CofferError.io("cannot open \(path): \(error.reason)")
        }
    }
}
