import CofferCore
import SystemKit

/// How a collection's state keeps up with its file: what other processes wrote, found through
/// the directory watch (or by looking, where the watch cannot see), and the locks around it.
extension FileCollection {
    /// Whether the directory watch sees every change to the file at `path`: it is a regular file
    /// named by the store directory alone. A symbolic link's target, or a file with another
    /// hard link, may be written through a name in another directory, which the watch does not
    /// see; such a file is looked at on every read and write.
    static func watchSees(_ path: String) -> Bool {
        guard let status = try? FileStatus.of(path, followingLinks: false) else { return false }
        return status.kind == .regular && status.linkCount == 1
    }

    /// The file at `path` opened, its log read whole (with the acknowledgement mark kept in
    /// `lockFile`, which the caller holds locked), its identity and size.
    static func load(path: String, lockFile: PosixFile) throws(CofferError) -> (PosixFile, CollectionLog, FileNode, Int) {
        let file = try PosixFile(path: path)
        let (identity, size) = try file.status()
        var log = try CollectionLog(file: path, bytes: try file.read(at: 0, count: size))
        log.note(AcknowledgementMark.read(from: lockFile))
        return (file, log, identity, size)
    }

    /// Runs `body` after catching up with what other processes wrote.
    func withFreshState<R>(_ body: (inout State) throws(CofferError) -> R) throws(CofferError) -> R {
        try state.withLock { s throws(CofferError) in
            try refresh(&s, holdingLock: false)
            return try body(&s)
        }
    }

    /// Runs `body` holding the exclusive file lock and `state` all along, after catching up and
    /// cutting off a torn tail (for rewrites of the whole file; appends go through `withAppend`).
    func withWriteLock<R>(_ body: (inout State) throws(CofferError) -> R) throws(CofferError) -> R {
        try writers.withLock { _ throws(CofferError) -> R in
            try state.withLock { s throws(CofferError) in
                try s.lockFile.lock(.exclusive)
                var caughtUp = false
                defer { releaseWriteLock(&s, caughtUp: caughtUp) }
                try refresh(&s, holdingLock: true)
                // The rewrite `body` makes carries the counters past what was set aside.
                if s.log.needsSettingAside { try setAsideTornTail(&s, key: nil) }
                let result = try body(&s)
                caughtUp = true
                return result
            }
        }
    }

    /// Lets go of the exclusive file lock. `caughtUp`: the write succeeded, so the state holds
    /// everything in the file, and the writes the watch has queued (still holding the lock,
    /// only this process's own) need no catching up; after a failure they are looked at again.
    func releaseWriteLock(_ s: inout State, caughtUp: Bool) {
        if caughtUp { watch.absorbOwnWrites(to: fileName, since: &s.mark) }
        s.lockFile.unlock()
    }

    /// Catches up with what other processes wrote, when the watch reports a change (or always,
    /// for a file it does not see whole). Another writer's changes are queued before its write
    /// returns, so before it lets go of the lock, and where the watch cannot tell every change
    /// (a network file system) it reports a change every time.
    ///
    /// The watch sees the store directory's entries, not the path above it: a directory above
    /// renamed, replaced or mounted over leaves the path naming another file unreported. So a
    /// writer (holding the lock) also checks, with one stat, that the path still names the file
    /// it read, at the size it read, before its records go in.
    func refresh(_ s: inout State, holdingLock: Bool) throws(CofferError) {
        // What follows `log.validEnd` is this process's own write, taken in once durable; no
        // other process can write meanwhile (the writer holds the exclusive file lock).
        if s.isAppending { return }
        // The new mark is taken before looking, so that a change made while looking is
        // reported again, and kept only once the state has caught up, so that a look that
        // failed is made again next time.
        var mark = s.mark
        if watch.changed(fileName, since: &mark) || !s.watched {
            try catchUp(&s, holdingLock: holdingLock)
        } else if holdingLock {
            guard let (identity, size) = try PosixFile.identity(of: path) else { throw .collectionNotFound(id.rawValue) }
            if identity != s.identity || size != s.observedSize { try catchUp(&s, holdingLock: true) }
        }
        s.mark = mark
    }

    private func catchUp(_ s: inout State, holdingLock: Bool) throws(CofferError) {
        guard let (identity, size) = try PosixFile.identity(of: path) else {
            throw .collectionNotFound(id.rawValue)
        }
        s.watched = Self.watchSees(path)   // the name may have been replaced by a link
        if identity == s.identity && size == s.observedSize && s.log.tornBytes == 0 {
            guard try s.file.holdsData(at: s.log.validEnd, before: size) else { return }
        }
        if !holdingLock { try s.lockFile.lock(.shared) }
        defer { if !holdingLock { s.lockFile.unlock() } }
        let (nowIdentity, nowSize) = try PosixFile.identity(of: path) ?? (identity, size)
        if nowIdentity == s.identity && nowSize >= s.log.validEnd {
            let more = try s.file.read(at: s.log.validEnd, count: nowSize - s.log.validEnd)
            let before = s.log.entries
            // Also when damage further on stops the append: the batches before it are in.
            defer { for (item, entry) in before where s.log.entries[item]?.offset != entry.offset { s.metadataCache[item] = nil } }
            try s.log.append(more)
        } else {
            let (file, log, newIdentity, newSize) = try Self.load(path: path, lockFile: s.lockFile)
            if log.needsSettingAside { warn(Self.tornTailWarning(log, path: path)) }
            if log.header.uuid != s.log.header.uuid { s.dataKey = nil; s.keptKey = nil }
            s.metadataCache = [:]
            s.hasher = try AttributeHasher(lookupKey: log.header.lookupKey)
            (s.file, s.log) = (file, log)
            s.identity = newIdentity
            s.observedSize = newSize
            return
        }
        s.observedSize = nowSize
    }
}
