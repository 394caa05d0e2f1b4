import CofferCore
import Dispatch
import Synchronization
import SystemKit

/// The audit log of a store: `audit.log` in the store directory, one line per `AuditEvent`
/// (`AuditLogRecord`), appended to by every process that records (cofferd, and coffer when it
/// works on the files itself). `read(directory:)` reads it back.
///
/// What it promises:
/// - **Private.** The file is created with mode 0600 whatever the umask, and set back to 0600
///   when found otherwise. A symbolic link in its place is refused, never followed. (The store
///   directory around it is 0700.)
/// - **Whole lines.** Each event is one `write(2)` on an `O_APPEND` descriptor, so lines from
///   several processes never mix. A line cut short (by a full disk, or a crash) is ended before
///   the next one is written, and the reader skips it.
/// - **Cheap, not durable.** Nothing is flushed to the disk (no fsync): once `record` returns
///   the kernel has the line, which a crash of the process does not lose, but a crash of the
///   machine may lose the last few seconds.
/// - **Bounded.** When the file reaches `limit` bytes it becomes `audit.log.1` (and
///   `audit.log.1` becomes `audit.log.2`; the older one is dropped), under an `flock` on
///   `audit.log.lock` so that processes past the limit together rotate once. A process still
///   writing to a rotated file notices when it passes the limit (its file is not the one the
///   name gives) or within `recheckInterval`, and reopens. On disk: at most about 3 × `limit`.
/// - **Labels sealed.** A label is written sealed to its collection's audit key (`AuditKey`),
///   so the log tells no more than the collection file; without a key file, it is left out.
/// - **Refusals folded.** Refusals of one application (an action on a collection) within
///   `foldInterval` seconds of its first are counted and written as one line with the count
///   (`AuditFolding`) when the interval is over (at the next event after it, on a timer, or at
///   `flush`), so that a program refused in a loop cannot rotate older lines out of the log.
/// - **Never fails its caller.** A problem (a full disk, the directory gone) is reported through
///   `warn` once, and again only after recording worked in between; events that cannot be
///   written meanwhile are dropped.
///
/// Thread-safe: `record` may be called from any thread (writes are serialized by a mutex).
/// `warn` is called with the mutex held, so it must not record.
public final class AuditLogFile: AuditRecorder {
    /// The log's name in the store directory.
    public static let fileName = "audit.log"
    /// The size at which the log is rotated unless told otherwise: 1 MiB (a few thousand events).
    public static let defaultLimit = 1 << 20
    /// How many rotated files are kept (`audit.log.1`, `audit.log.2`).
    public static let keptGenerations = 2
    /// How long refusals alike are folded together, by default: a minute.
    public static let defaultFoldInterval: UInt64 = 60

    /// The store directory the log is in.
    public let directory: String
    /// The size in bytes past which the file is rotated.
    public let limit: Int
    /// The path of the current file.
    public var path: String { Self.path(in: directory) }

    private let recheckInterval: Duration
    private let warn: @Sendable (String) -> Void
    private let state: Mutex<State>
    private let timers = DispatchQueue(label: "coffer.audit-folding")

    /// What this process knows of the file it appends to.
    private struct State {
        var file: FileDescriptor?
        /// Which file `file` is, to tell whether the name still gives it.
        var identity: FileNode?
        /// When to look at the name again (another process may have rotated or removed it).
        var nextCheck = ContinuousClock.Instant.now
        /// A problem was reported and recording has not worked since.
        var warned = false
        /// The last write was cut short: the next line starts with a newline to end it.
        var unterminated = false
        var folding: AuditFolding
        /// A timer is set to write the counted refusals.
        var flushScheduled = false
        /// What seals labels to each collection's audit key (nil: it has none), and when its
        /// key file was last looked at.
        var sealers: [CollectionID: (sealer: AuditSealer?, checked: ContinuousClock.Instant)] = [:]
    }

    /// The log of the store in `directory` (which must exist: `FileStore` creates it). Nothing
    /// is opened until the first event. `limit`: the rotation size in bytes. `recheckInterval`:
    /// how long a quiet process trusts that its open file is still the current one.
    public init(directory: String, limit: Int = AuditLogFile.defaultLimit, recheckInterval: Duration = .seconds(1),
                foldInterval: UInt64 = AuditLogFile.defaultFoldInterval,
                warn: @escaping @Sendable (String) -> Void = FileStore.warnOnStandardError) {
        self.directory = directory
        self.limit = max(1, limit)
        self.recheckInterval = recheckInterval
        self.warn = warn
        state = Mutex(State(folding: AuditFolding(interval: max(1, foldInterval))))
    }

    deinit {
        flush()
        state.withLock { $0.file?.close() }
    }

    /// Appends `event` as one line (or counts it, a refusal like one just written). Never
    /// throws, never waits for the disk.
    public func record(_ event: AuditEvent) {
        record(contentsOf: [event])
    }

    /// Appends `events`, one line each, in one write (a GetSecrets of many items).
    public func record(contentsOf events: [AuditEvent]) {
        guard !events.isEmpty else { return }
        let summaryDue = state.withLock { state -> UInt64? in
            write(state.folding.fold(sealingLabels(events, &state)), &state)
            guard !state.flushScheduled, let due = state.folding.nextSummary else { return nil }
            state.flushScheduled = true
            return due
        }
        if let summaryDue { writeCounted(at: summaryDue) }
    }

    /// Sets the timer that writes the counted refusals at `due` (seconds since 1970).
    private func writeCounted(at due: UInt64) {
        let now = Clock.now()
        timers.asyncAfter(deadline: .now() + .seconds(Int(due > now ? due - now : 0))) { [weak self] in
            self?.writeCounted(before: Clock.now())
        }
    }

    /// `events` with their labels sealed to their collections' audit keys; a label that cannot
    /// be sealed (no collection, no key file yet) is left out.
    private func sealingLabels(_ events: [AuditEvent], _ state: inout State) -> [AuditEvent] {
        events.map { event in
            guard let label = event.label else { return event }
            var sealed = event
            sealed.label = nil
            if let collection = event.collection, let sealer = sealer(for: collection, &state) {
                sealed.sealedLabel = sealer.seal(label, collection: collection, item: event.item, time: event.time)
            }
            return sealed
        }
    }

    /// The sealer for `collection`'s audit key, its key file looked at again when it was last
    /// more than `recheckInterval` ago (a collection deleted and made again has a new key), or
    /// when it had none (it may have been written since).
    private func sealer(for collection: CollectionID, _ state: inout State) -> AuditSealer? {
        let now = ContinuousClock.now
        if let known = state.sealers[collection], known.sealer != nil, now - known.checked < recheckInterval { return known.sealer }
        let publicKey = AuditKey.readPublicKey(directory, collection)
        var sealer = state.sealers[collection]?.sealer
        if sealer?.publicKey != publicKey {
            sealer = publicKey.flatMap { try? AuditSealer(publicKey: $0) }
        }
        state.sealers[collection] = (sealer, now)
        return sealer
    }

    /// Writes the refusals counted and not yet written (cofferd calls it as it stops).
    public func flush() {
        writeCounted(before: nil)
    }

    /// Writes the summaries of the intervals over by `now` (all when nil).
    private func writeCounted(before now: UInt64?) {
        let next = state.withLock { state -> UInt64? in
            write(state.folding.flush(before: now), &state)
            let next = state.folding.nextSummary
            state.flushScheduled = next != nil
            return next
        }
        if let next { writeCounted(at: next) }
    }

    private func write(_ events: [AuditEvent], _ state: inout State) {
        guard !events.isEmpty else { return }
        var lines: [UInt8] = []
        lines.reserveCapacity(events.count * 200)
        AuditLogRecord.appendLines(for: events, to: &lines)
        write(lines, &state)
    }

    private func write(_ line: [UInt8], _ state: inout State) {
        do throws(AuditLogFailure) {
            try append(line, &state)
            state.warned = false
        } catch {
            guard !state.warned else { return }
            state.warned = true
            warn("the audit log \(path) cannot be written: \(error.reason); events go unrecorded until this is fixed")
        }
    }

    static func path(in directory: String) -> String { "\(directory)/\(fileName)" }

    /// The path of rotated generation `generation` (1 is the newest).
    static func path(in directory: String, generation: Int) -> String { "\(path(in: directory)).\(generation)" }

    static func lockPath(in directory: String) -> String { "\(path(in: directory)).lock" }

    // MARK: Appending

    private func append(_ line: [UInt8], _ state: inout State) throws(AuditLogFailure) {
        let now = ContinuousClock.Instant.now
        if now >= state.nextCheck {
            state.nextCheck = now.advanced(by: recheckInterval)
            try reopenIfMoved(&state)
        }
        // Nil only after a failure within the recheck interval (already reported).
        guard let file = state.file else { throw AuditLogFailure("the log could not be opened") }
        var bytes = line
        if state.unterminated { bytes.insert(0x0A, at: 0) }
        let written = try AuditLogFailure.check { () throws(Errno) in try file.write(bytes[...]) }
        guard written == bytes.count else {
            state.unterminated = true
            throw AuditLogFailure("only \(written) of \(bytes.count) bytes were written (is the disk full?)")
        }
        state.unterminated = false
        // On an O_APPEND descriptor the offset is where this write ended: the size of the file
        // then, everyone's earlier lines included.
        let size = try AuditLogFailure.check { () throws(Errno) in try file.currentOffset() }
        if size >= limit { try rotate(&state) }
    }

    /// Opens the file the name gives, unless it is the one open already.
    private func reopenIfMoved(_ state: inout State) throws(AuditLogFailure) {
        if let identity = state.identity, let current = try? FileStatus.of(path), current.node == identity {
            return
        }
        try open(&state)
    }

    /// Opens (creating) the file the name gives now, 0600, never through a symbolic link (nor
    /// waiting on a FIFO: only a regular file is taken), and notes whether it ends in a line cut
    /// short.
    private func open(_ state: inout State) throws(AuditLogFailure) {
        state.file?.close()
        state.file = nil
        state.identity = nil
        state.unterminated = false
        let file = try AuditLogFailure.check { () throws(Errno) in
            try FileDescriptor.open(path, .readWrite, options: [.create, .append, .noFollow, .nonBlocking])
        }
        do throws(AuditLogFailure) {
            let status = try AuditLogFailure.check { () throws(Errno) in try file.status() }
            guard status.kind == .regular else { throw AuditLogFailure("it is not a regular file") }
            if status.permissions != 0o600 {
                try AuditLogFailure.check { () throws(Errno) in try file.setPermissions(0o600) }
            }
            // A line a crash cut short is ended before the next one starts.
            if status.size > 0 {
                let last = try AuditLogFailure.check { () throws(Errno) in try file.read(at: status.size - 1, upTo: 1) }
                state.unterminated = last != [0x0A]
            }
            state.file = file
            state.identity = status.node
        } catch {
            file.close()
            throw error
        }
    }

    // MARK: Rotation

    /// Past the limit: under the rotation lock, renames the file away unless another process
    /// did already (the name then gives another file), and opens the file the name gives.
    private func rotate(_ state: inout State) throws(AuditLogFailure) {
        let lockPath = Self.lockPath(in: directory)
        let lock = try AuditLogFailure.check { () throws(Errno) in
            try FileDescriptor.open(lockPath, .readWrite, options: [.create, .noFollow])
        }
        defer { lock.close() }  // closing drops the lock
        try AuditLogFailure.check { () throws(Errno) in try lock.lock(.exclusive) }
        if let current = try? FileStatus.of(path), let identity = state.identity,
           current.node == identity, current.size >= limit {
            for generation in stride(from: Self.keptGenerations - 1, through: 1, by: -1) {
                try renameIfPresent(Self.path(in: directory, generation: generation),
                                    to: Self.path(in: directory, generation: generation + 1))
            }
            try renameIfPresent(path, to: Self.path(in: directory, generation: 1))
        }
        try open(&state)
    }

    private func renameIfPresent(_ from: String, to: String) throws(AuditLogFailure) {
        do {
            try FileSystem.rename(from, to: to)
        } catch {
            guard error != .noSuchFile else { return }
            throw AuditLogFailure(error)
        }
    }
}

/// Why an event could not be recorded (reported through `warn`, never thrown to the caller).
struct AuditLogFailure: Error {
    let reason: String

    init(_ reason: String) { self.reason = reason }

    init(_ error: Errno) {
        reason = error == .symbolicLink
            ? "it is a symbolic link, which is not followed (remove it, and the log starts again)"
            : "\(error.operation) failed: \(error.reason)"
    }

    /// Runs `call` (a system call through SystemKit, whose errors name the call and the path).
    static func check<R>(_ call: () throws(Errno) -> R) throws(AuditLogFailure) -> R {
        do { return try call() } catch { throw AuditLogFailure(error) }
    }
}
