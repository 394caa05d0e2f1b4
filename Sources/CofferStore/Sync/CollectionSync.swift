import CofferCore
import CofferCrypto
import Synchronization
import SystemKit

/// Keeps one collection and its sync folder in step, a round at a time (`sync()`): local
/// changes go out to this device's file, other devices' changes come in to the store.
///
/// - Export is a reconciliation: an item whose payload differs from what `SyncState` says was
///   last exported or applied becomes a new version in this device's file; a state entry whose
///   item is gone becomes a tombstone. Either replaces the version the store held, the one the
///   change was made on: a version another device made meanwhile, not applied here yet, is a
///   concurrent edit, and the one of the two that loses is kept. The state is written before the append, and a version it
///   names that the folder lacks is exported again, so no crash loses a local change.
/// - Import applies each item whose merged winner is not what the store holds, with one commit
///   that only goes ahead while the items it touches are as the export saw them: a client's
///   change made meanwhile is exported at the next round (and wins, being newer) rather than
///   overwritten.
/// - Rounds of one collection take turns, in this process (a mutex) and across processes (an
///   exclusive lock on `<id>.sync.lock`), so one device file has one writer.
package final class CollectionSync: Sendable {
    package let id: CollectionID
    let directory: String
    package let collection: FileCollection
    /// The least time between two `merged` records of this device (milliseconds).
    let publishInterval: UInt64
    private let session = Mutex<Session?>(nil)

    /// What a round keeps for the next one.
    struct Session {
        var state: SyncState
        var folder: SyncFolder
        let keys: SyncKeys
        /// What seals the state (derived from the local collection's key).
        let stateKey: SecureBytes
        /// Tells of changes in the folder (what other devices' files brought).
        let watch: DirectoryWatch
        var watchMark: DirectoryWatch.Mark
        /// Where the collection stood when the last round began.
        var contentMark: FileCollection.ContentMark?
        /// The state file as this session last read or wrote it: another process's round (or
        /// a join moving the collection) replaces it, and this session then starts afresh.
        var stateFile: FileNode?
        /// When this session last appended a `merged` record (wall milliseconds).
        var publishedAt: UInt64 = 0
        /// How many records this device's file holds when compacting it is looked at next.
        var nextCompactionLook: UInt64 = 32
        /// What happened to tell at the end of the round (this device's file made anew).
        var notices: [String] = []
        /// Local items deleted everywhere else while this store was away (restored from a
        /// backup), whose tombstones are collected: removed at the next import.
        var collected: Set<ItemID> = []
        /// Where each item's record lay at the last export: only items whose record moved are
        /// looked at again.
        var offsets: [ItemID: Int] = [:]
        /// Every item of the folder is compared with the store (at the start, and after an
        /// import had to wait for a local change); otherwise only those the last read changed.
        var checkEverything = true
    }

    /// What one round did.
    package struct Round: Equatable, Sendable {
        /// Local changes written to this device's file.
        package var exported = 0
        /// Other devices' changes applied to the store, in order.
        package var applied: [SyncedChange] = []
        /// What is wrong in the folder (damaged device files, conflicting copies), for the log
        /// and `coffer doctor`; none of it stops the round.
        package var problems: [String] = []
    }

    /// `publishInterval`: the least time, in milliseconds, between two records saying how far
    /// this device has merged the others' files (what lets each compact its own).
    package init(collection: FileCollection, directory: String, publishInterval: UInt64 = 60_000) {
        self.id = collection.id
        self.collection = collection
        self.directory = directory
        self.publishInterval = publishInterval
    }

    static func lockPath(_ directory: String, _ id: CollectionID) -> String { SyncState.path(directory, id) + ".lock" }

    /// Runs one round; needs the collection unlocked.
    @discardableResult
    package func sync() throws(CofferError) -> Round {
        try withSession { s throws(CofferError) -> Round in try round(&s) }
    }

    /// Runs `body` on this collection's session (started if need be), holding its turn in
    /// this process and the sync lock across processes; after a failure the next use starts
    /// afresh (reads the state and the whole folder again).
    func withSession<R>(_ body: (inout Session) throws(CofferError) -> R) throws(CofferError) -> R {
        try session.withLock { session throws(CofferError) -> R in
            let lock = try PosixFile(path: Self.lockPath(directory, id), create: true)
            try lock.lock(.exclusive)
            defer { lock.unlock() }
            do throws(CofferError) {
                if let known = session?.stateFile, try PosixFile.identity(of: SyncState.path(directory, id))?.identity != known {
                    session = nil
                }
                var current = if let session { session } else { try start() }
                defer { session = current }
                return try body(&current)
            } catch {
                session = nil
                throw error
            }
        }
    }

    /// Whether a round has something to do: the folder changed (another device's file grew,
    /// or one came), or the collection did, since the last round began; true before the first
    /// round and after a failed one. A look at the watch and one `stat`: cheap to ask often.
    package func hasNews() -> Bool {
        session.withLock { session in
            guard var s = session else { return true }
            defer { session = s }
            if s.watch.changedAnything(since: &s.watchMark) { return true }
            return (try? collection.contentMark()) != s.contentMark
        }
    }

    /// Forgets what was read (when the collection locks: the keys go with it).
    package func reset() {
        session.withLock { $0 = nil }
    }

    // MARK: Starting

    private func start() throws(CofferError) -> Session {
        let stateKey = try collection.syncStateKey()
        guard var state = try SyncState.load(directory: directory, id: id, key: stateKey), let folderKey = state.folderKey else {
            throw .invalidArgument("collection '\(id.rawValue)' is not synced; 'coffer sync enable' syncs it")
        }
        let keys = try SyncKeys(folderKey: folderKey)
        guard (try? FileStatus.of(state.folder))?.kind == .directory else {
            throw .io("the sync folder \(state.folder) of collection '\(id.rawValue)' is missing or not a directory; syncing waits until it is back (nothing local is affected)")
        }
        // Watched before the first read, so that nothing arriving during it goes unseen.
        let watch = DirectoryWatch(directory: state.folder) { _ in true }
        let watchMark = watch.mark()
        var session = Session(state: state, folder: SyncFolder(path: state.folder, collection: state.uuid, keys: keys, floors: state.floors),
                              keys: keys, stateKey: stateKey, watch: watch, watchMark: watchMark,
                              stateFile: try PosixFile.identity(of: SyncState.path(directory, id))?.identity)
        _ = try read(&session)
        reconcileLostVersions(&session)
        try matchUnmappedItems(&session)
        return session
    }

    /// What to do, at the start, with each local item whose version the folder does not hold:
    ///
    /// - this device's, while the folder holds no more of this device's file than the state
    ///   says: never appended (a crash, a full disk; or the file was lost) — it goes out again;
    /// - this device's while the folder holds more of its file than the state says (the store
    ///   was put back from a backup), or another device's whose file is there and read: that
    ///   device dropped it at compaction, which it does only once every device has seen it
    ///   superseded — if nothing of the item is left, it was deleted everywhere and collected,
    ///   and goes here too (otherwise the import applies what superseded it);
    /// - another device's whose file is missing or set aside: nothing is done (this store keeps
    ///   what it has, and never sends another device's version as its own: that device may
    ///   have changed the item since, in the file this store cannot read now).
    private func reconcileLostVersions(_ s: inout Session) {
        let own = s.state.device
        let stale = (s.folder.positions[own]?.nextSequence ?? 0) > (s.state.floors[own]?.nextSequence ?? 0)
        for (local, entry) in s.state.entries {
            let merged = s.folder.items[entry.item]
            guard merged?.changes[entry.version] == nil else { continue }
            let owner = entry.version.device
            if owner == own && !stale {
                s.state.entries[local]?.digest = []
            } else if owner == own || (s.folder.positions[owner] != nil && s.folder.damaged[owner] == nil), merged?.winner == nil {
                s.collected.insert(local)
            }
        }
    }

    /// Maps local items the state does not know to folder items it does not map either, by
    /// content: what a crash between applying another device's new item and writing the state
    /// leaves (the item is in the store, the state does not say where it came from).
    private func matchUnmappedItems(_ s: inout Session) throws(CofferError) {
        let offsets = try collection.recordOffsets()
        let unmapped = offsets.keys.filter { s.state.entries[$0] == nil }.sorted()
        guard !unmapped.isEmpty else { return }
        let mapped = Set(s.state.entries.values.map(\.item))
        var byDigest: [[UInt8]: [(SyncItemID, ChangeVersion)]] = [:]
        for (item, merged) in s.folder.items where !mapped.contains(item) {
            guard let winner = merged.winner, case .item(let sealed) = winner.content,
                  let payload = try? s.keys.openContent(sealed, item: item, version: winner.version) else { continue }
            byDigest[try s.keys.digest(of: ItemPayload.canonical(payload)), default: []].append((item, winner.version))
        }
        guard !byDigest.isEmpty else { return }
        try collection.forEachPayload(of: unmapped) { local, payload throws(CofferError) in
            guard !Self.isLocalOnly(try ItemPayload.metadata(from: payload)) else { return }
            let digest = try s.keys.digest(of: ItemPayload.canonical(payload))
            guard let (item, version) = byDigest[digest]?.popLast() else { return }
            s.state.entries[local] = SyncState.Entry(item: item, version: version, digest: digest)
        }
    }

    // MARK: A round

    func round(_ s: inout Session) throws(CofferError) -> Round {
        var round = Round()
        s.contentMark = try collection.contentMark()
        _ = s.watch.changedAnything(since: &s.watchMark)
        var changed = try read(&s)
        let offsets = try collection.recordOffsets()
        round.exported = try export(&s, offsets: offsets)
        if round.exported > 0 { changed.formUnion(try read(&s)) }
        s.offsets = offsets
        let toCheck = s.checkEverything ? Set(s.folder.items.keys) : changed
        s.checkEverything = false
        round.applied = try importChanges(of: toCheck, into: &s, offsets: offsets)
        if !s.checkEverything {   // all applied: what is dropped is in the store too
            try publishMerged(&s)
            try compactIfWorthIt(&s)
        }
        round.problems = s.notices + problems(of: s)
        s.notices = []
        return round
    }

    /// Reads what the device files gained; returns the items whose merged state changed.
    func read(_ s: inout Session) throws(CofferError) -> Set<SyncItemID> {
        var changed = try s.folder.refresh()
        if let why = try ownFileNeedsRemaking(s) {
            try remakeOwnFile(&s, because: why)
            changed.formUnion(try s.folder.refresh())
        }
        for item in changed { for version in s.folder.items[item]?.changes.keys ?? [:].keys { s.state.clock.observe(version.timestamp) } }
        return changed
    }

    /// The attribute that keeps an item on this device only (`coffer sync local-only`).
    package static let localOnlyAttribute = (name: "coffer:sync", value: "local")

    static func isLocalOnly(_ metadata: ItemMetadata) -> Bool {
        metadata.attributes[localOnlyAttribute.name] == localOnlyAttribute.value
    }

    /// Appends a version of each local item that changed since it was last exported or
    /// applied, and a tombstone for each that is gone, or that is now kept on this device
    /// only (which never enters the folder); returns how many.
    private func export(_ s: inout Session, offsets: [ItemID: Int]) throws(CofferError) -> Int {
        var records: [SyncRecord] = []
        // A deletion this device made that the folder no longer shows (its file was lost or
        // rolled back) is written again as it was — same version, so it supersedes nothing
        // made after it — so that no device joining later brings the item back.
        for (item, gone) in s.state.deleted.sorted(by: { $0.key < $1.key }) where gone.device == s.state.device {
            guard let merged = s.folder.items[item], merged.changes[gone] == nil, let winner = merged.winner,
                  winner.content != .deleted, winner.version < gone else { continue }
            records.append(.change(SyncChange(item: item, version: gone, replaces: Set(merged.heads.filter { $0 < gone }), content: .deleted)))
        }
        var gone = Set(s.state.entries.keys.filter { offsets[$0] == nil })
        let moved = offsets.filter { s.offsets[$0.key] != $0.value }.keys.sorted()
        try collection.forEachPayload(of: moved) { local, payload throws(CofferError) in
            let entry = s.state.entries[local]
            if Self.isLocalOnly(try ItemPayload.metadata(from: payload)) {
                if entry != nil { gone.insert(local) }
                return
            }
            let digest = try s.keys.digest(of: ItemPayload.canonical(payload))
            if let entry, entry.digest == digest { return }
            let item = if let entry { entry.item } else { try Self.newItemID() }
            let version = ChangeVersion(timestamp: s.state.clock.tick(now: Clock.nowInMilliseconds()), device: s.state.device)
            let content = try s.keys.sealContent(payload, item: item, version: version)
            records.append(.change(SyncChange(item: item, version: version, replaces: Set([entry?.version].compactMap { $0 }),
                                              content: .item(content))))
            s.state.entries[local] = SyncState.Entry(item: item, version: version, digest: digest)
        }
        for local in gone.sorted() {
            guard let entry = s.state.entries.removeValue(forKey: local) else { continue }
            guard s.folder.items[entry.item]?.exists ?? true else { continue }   // deleted elsewhere already
            let version = ChangeVersion(timestamp: s.state.clock.tick(now: Clock.nowInMilliseconds()), device: s.state.device)
            records.append(.change(SyncChange(item: entry.item, version: version, replaces: [entry.version], content: .deleted)))
            s.state.deleted[entry.item] = version
        }
        guard !records.isEmpty else { return 0 }
        // The state says how far this device's file goes once these are in: a copy of the file
        // from before them put back later is then seen to have gone back.
        if let position = s.folder.positions[s.state.device] {
            let next = max(position.nextSequence, s.state.floors[s.state.device]?.nextSequence ?? 0) + UInt64(records.count)
            s.state.floors[s.state.device] = SyncState.Floor(generation: position.generation, nextSequence: next)
        }
        try save(&s)
        try appendOwn(records, &s)
        return records.count
    }

    /// Appends `records` to this device's file, durably (read back by the next `read`).
    /// Written where the last whole record read ends: what a crash or anyone else left after it
    /// (a record cut short, bytes appended) is written over, not built on.
    func appendOwn(_ records: [SyncRecord], _ s: inout Session) throws(CofferError) {
        guard let position = s.folder.positions[s.state.device] else {
            throw .io("this device's sync file in \(s.state.folder) has no header; it is made anew at the next round")
        }
        let own = SyncDeviceFile(folder: s.state.folder, collection: s.state.uuid, device: s.state.device, generation: position.generation)
        let sequence = max(position.nextSequence, s.state.floors[s.state.device]?.nextSequence ?? 0)
        try own.append(records, first: position.records, sequence: sequence, at: position.end, keys: s.keys)
    }

    /// Writes the state, and notes which file it is now.
    func save(_ s: inout Session) throws(CofferError) {
        for (device, position) in s.folder.positions where s.folder.damaged[device] == nil {
            let floor = s.state.floors[device]
            s.state.floors[device] = SyncState.Floor(generation: max(position.generation, floor?.generation ?? 0),
                                                     nextSequence: max(position.nextSequence, floor?.nextSequence ?? 0))
        }
        try s.state.write(directory: directory, id: id, key: s.stateKey)
        s.stateFile = try PosixFile.identity(of: SyncState.path(directory, id))?.identity
    }

    private static func newItemID() throws(CofferError) -> SyncItemID {
        guard let item = SyncItemID(Random.bytes(16)) else { throw .io("cannot make a sync id") }
        return item
    }

    private func problems(of s: Session) -> [String] {
        moveNotices(of: s) + s.folder.damaged.sorted { $0.key < $1.key }.map { "the sync file of device \($0.key) is set aside: \($0.value)" }
            + s.folder.conflictingCopies.map {
                "\($0) is a second file under one device's name: two devices share an id (one restored from the other's backup?); the changes of both are merged, but the restored device should join again to get an id of its own"
            }
    }
}
