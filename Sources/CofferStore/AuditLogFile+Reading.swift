import CofferCore
import SystemKit

/// What a store's audit log holds, read from all its files.
public struct AuditLogContents: Sendable {
    /// The events, oldest first.
    public var events: [AuditEvent]
    /// Lines skipped because they are not whole records: a line torn by a crash or a full
    /// disk, damage, or a record of a newer version of Coffer this one cannot read.
    public var skippedLines: Int
    /// Whether any of the log's files exists (false: nothing was ever recorded there).
    public var exists: Bool
}

extension AuditLogFile {
    /// Reads the log of the store in `directory`: the rotated files and the current one, under
    /// the rotation lock (shared) when there is one, changing nothing. Events come oldest first
    /// (by time; events of the same second in the order they were written). A line that is not
    /// a whole record is skipped and counted, never fatal. Throws `CofferError.io` only when a
    /// file exists but cannot be read (or is a symbolic link, which is not followed).
    public static func read(directory: String) throws(CofferError) -> AuditLogContents {
        let lock = try openIfPresent(lockPath(in: directory))
        defer { lock?.close() }
        if let lock {
            do { try lock.lock(.shared) } catch { throw CofferError.io("cannot lock \(lockPath(in: directory)): \(error.reason)") }
        }
        var contents = AuditLogContents(events: [], skippedLines: 0, exists: false)
        let paths = (1...keptGenerations).reversed().map { path(in: directory, generation: $0) } + [path(in: directory)]
        for path in paths {
            guard let file = try openIfPresent(path) else { continue }
            defer { file.close() }
            let kind: FileStatus.Kind, bytes: [UInt8]
            do {
                kind = try file.status().kind
                bytes = kind == .regular ? try file.readAll() : []
            } catch {
                throw CofferError.io("cannot read \(path): \(error.reason)")
            }
            guard kind == .regular else { throw CofferError.io("\(path) is not a regular file; remove it") }
            contents.exists = true
            for line in bytes.split(separator: 0x0A) {
                if let event = AuditLogRecord.event(fromLine: line) {
                    contents.events.append(event)
                } else if line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) {
                    contents.skippedLines += 1
                }
            }
        }
        // A process that had not noticed a rotation yet may have written a line or two into an
        // older file: order by time, keeping the written order within a second.
        contents.events = contents.events.enumerated()
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
        return contents
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
