import CofferCore
import CofferCrypto
import Synchronization
import SystemKit

/// A collection persisted in one encrypted, append-only file (see `StoreHeader` and
/// `RecordFrame` for the format).
///
/// - Every commit appends its records as one batch and `fdatasync`s before returning, so cost
///   does not grow with the number of items; superseded records are reclaimed by compaction
///   (a rewrite to a temporary file, fsync, rename, directory fsync) once they outweigh the
///   live ones, which keeps the amortized cost of a change constant.
/// - Once a batch is durable, and before it is acknowledged, the counters it brought the file
///   to are noted in the collection's lock file (see `AcknowledgementMark`): acknowledged
///   records lost to damage later are then told from what a crash leaves of a write.
/// - The file grows in zero-filled steps (see `reservedSize(for:)`) and records are written
///   into that reserved space: the file's size then stays the same, so `fdatasync` has only
///   the data to write, not the inode too. Zeros after the last record are free space.
/// - Other processes may write the same file: writers hold an exclusive `flock` on the
///   collection's lock file and first read what others appended; readers learn from the
///   `DirectoryWatch` that the file changed, then look (inode, size, whether a record follows
///   the last one they know) and re-read under a shared lock.
/// - The data key lives in secure memory while unlocked. Decrypted labels and attributes are
///   cached then; secrets are decrypted on demand only.
public final class FileCollection: CollectionBackend, Sendable {
    public let id: CollectionID
    let path: String
    let directory: String
    /// Argon2id parameters for a password change (new collections get them at creation).
    let kdf: Argon2Parameters
    let warn: @Sendable (String) -> Void
    /// Called by an appending writer right before it writes and flushes its records (see
    /// `FileStore`'s internal init).
    let beforeFlush: @Sendable () -> Void
    /// What the unlock throttle reads the time from.
    let clock: TimeSource
    let watch: DirectoryWatch
    let fileName: String

    /// Reached only under `state`'s lock: the hasher's HMAC handle is not for two threads at once.
    struct State: Sendable {
        var log: CollectionLog
        var file: PosixFile
        var identity: FileNode
        var observedSize: Int
        var lockFile: PosixFile
        var hasher: AttributeHasher
        var dataKey: DataKey?
        /// The key of a collection that locked by itself within its fingerprint window: kept
        /// (in secure memory) for `unlockWithKeptKey`, used by nothing else.
        var keptKey: DataKey?
        var metadataCache: [ItemID: ItemMetadata] = [:]
        /// The access rules of the meta record at `offset` of the file `identity`.
        var accessCache: (identity: FileNode, offset: Int, access: CollectionAccess)?
        /// What the directory watch had reported when this state was last brought up to date.
        var mark: DirectoryWatch.Mark
        /// Whether the watch sees every change to the file (see `watchSees`).
        var watched: Bool
        /// A writer of this process holds the file lock to append (see `withAppend`): readers
        /// leave the file alone and use the state, as it was before the write until its records
        /// are taken in, and then holding all the file does.
        var isAppending = false
    }

    /// Reached only through `withLock` (and `withFreshState`, `withWriteLock`, `withAppend`).
    let state: Mutex<State>
    /// Held by this process's writer from taking the exclusive file lock until it lets go of it
    /// (after its records are taken into `state`, or it gave up): one writer at a time, taken
    /// before `state`.
    let writers = Mutex(())

    /// Opens an existing collection file (locked). A torn tail is reported through `warn`.
    init(id: CollectionID, directory: String, watch: DirectoryWatch, kdf: Argon2Parameters,
         warn: @escaping @Sendable (String) -> Void, beforeFlush: @escaping @Sendable () -> Void, clock: TimeSource) throws(CofferError) {
        self.id = id
        self.beforeFlush = beforeFlush
        self.clock = clock
        self.directory = directory
        self.kdf = kdf
        self.path = FileStore.storePath(directory, id)
        self.fileName = FileStore.storeName(id)
        self.warn = warn
        self.watch = watch
        let mark = watch.mark()
        let lockFile = try PosixFile(path: FileStore.lockPath(directory, id), create: true)
        try lockFile.lock(.shared)
        defer { lockFile.unlock() }
        guard try PosixFile.identity(of: path) != nil else { throw .collectionNotFound(id.rawValue) }
        let (file, log, identity, size) = try Self.load(path: path, lockFile: lockFile)
        if log.needsSettingAside {
            warn(Self.tornTailWarning(log, path: path))
        }
        state = Mutex(State(log: log, file: file, identity: identity, observedSize: size, lockFile: lockFile,
                             hasher: try AttributeHasher(lookupKey: log.header.lookupKey), mark: mark,
                             watched: Self.watchSees(path)))
    }

    /// Creates a new collection atomically (its file appears complete or not at all), unlocked:
    /// its keys file (one slot, the password's) first, then its file, both under the
    /// collection's exclusive lock, so that no other creator of the id writes between them.
    static func create(id: CollectionID, directory: String, watch: DirectoryWatch, label: String, password: SecureBytes,
                       access: CollectionAccess, kdf: Argon2Parameters, warn: @escaping @Sendable (String) -> Void,
                       beforeFlush: @escaping @Sendable () -> Void, clock: TimeSource) throws(CofferError) -> FileCollection {
        let path = FileStore.storePath(directory, id)
        let dataKey = try DataKey(try CofferError.catching { try Random.secureBytes(AESGCM.keyLength) })
        let header = try StoreHeader.create(uuid: Random.bytes(16), created: Clock.now(), lookupKey: Random.bytes(32),
                                            dataKey: dataKey.bytes)
        let slots = try KeySlotsFile.first(uuid: header.uuid, dataKey: dataKey.bytes, opener: .password(password), kdf: kdf)
        // Under the collection's exclusive lock, let go before the collection is opened (which
        // takes it shared through a descriptor of its own).
        let lock = try PosixFile(path: FileStore.lockPath(directory, id), create: true)
        try lock.lock(.exclusive)
        do {
            defer { lock.unlock() }
            guard try PosixFile.identity(of: path) == nil else { throw .collectionExists(id.rawValue) }
            // A keys file without a collection file is what a creation cut short left: replaced.
            try slots.write(directory: directory, id: id)
            let meta = try RecordFrame.encode(kind: .meta, endsBatch: true, sequence: 0, timestamp: header.created, itemID: 0,
                                              publicPart: CollectionLog.metaPublicPart(nextItemID: 1, nextSequence: 1, label: label,
                                                                                       generation: 1),
                                              plaintext: try Self.sealable(AccessCoding.encode(access)), key: dataKey, uuid: header.uuid)
            let temporary = "\(path).new-\(ProcessControl.currentID)"
            let file = try PosixFile(path: temporary, create: true)
            do throws(CofferError) {
                try file.write(header.encoded() + meta, at: 0)
                try file.sync()
                try PosixFile.link(temporary, to: path, id: id)
                try PosixFile.remove(temporary)
                try PosixFile.syncDirectory(directory)
            } catch {
                try? PosixFile.remove(temporary)
                throw error
            }
        }
        let collection = try FileCollection(id: id, directory: directory, watch: watch, kdf: kdf, warn: warn,
                                            beforeFlush: beforeFlush, clock: clock)
        collection.state.withLock { $0.dataKey = dataKey }
        collection.keepAuditKey(dataKey, uuid: header.uuid)
        return collection
    }

    // MARK: Reading

    public var isLocked: Bool { state.withLock { $0.dataKey == nil } }

    public func info() throws(CofferError) -> CollectionInfo {
        try withFreshState { s throws(CofferError) in
            CollectionInfo(id: id, label: s.log.label, created: s.log.header.created, modified: s.log.modified,
                           isLocked: s.dataKey == nil, itemCount: s.log.entries.count, recovery: recovery(of: s.log))
        }
    }

    public func contains(_ item: ItemID) throws(CofferError) -> Bool {
        try withFreshState { s throws(CofferError) in s.log.entries[item] != nil }
    }

    public func itemIDs(matching attributes: Attributes, limit: MatchLimit) throws(CofferError) -> [ItemID] {
        try withFreshState { s throws(CofferError) in
            let terms = s.hasher.terms(attributes)
            guard s.dataKey != nil, !attributes.isEmpty else {
                return s.log.index.items(matchingAll: terms, limit: limit)
            }
            // Unlocked: confirm each candidate against its authenticated attributes, so a
            // damaged or forged index entry can never make an item match.
            var confirmed: [ItemID] = []
            for id in s.log.index.items(matchingAll: terms, limit: .all) {
                let actual = try metadata(of: id, in: &s).attributes
                guard attributes.allSatisfy({ actual[$0.key] == $0.value }) else { continue }
                confirmed.append(id)
                if limit == .one { break }
            }
            return confirmed
        }
    }

    public func itemIDs(withExactly attributes: Attributes) throws(CofferError) -> [ItemID] {
        try withFreshState { s throws(CofferError) in s.log.index.items(withExactly: s.hasher.terms(attributes)) }
    }

    public func metadata(of item: ItemID) throws(CofferError) -> ItemMetadata {
        try withFreshState { s throws(CofferError) in try metadata(of: item, in: &s) }
    }

    public func metadata(of items: [ItemID]) throws(CofferError) -> [ItemMetadata?] {
        try withFreshState { s throws(CofferError) in
            var found: [ItemMetadata?] = []
            found.reserveCapacity(items.count)
            for item in items { found.append(s.log.entries[item] == nil ? nil : try metadata(of: item, in: &s)) }
            return found
        }
    }

    public func secret(of item: ItemID) throws(CofferError) -> Secret {
        try withFreshState { s throws(CofferError) in
            try ItemPayload.secret(cutFrom: try payload(of: item, in: s))
        }
    }

    public func forEachSecret(of items: [ItemID], _ body: (Int, Secret) throws -> Void) throws {
        try state.withLock { s throws in
            try refresh(&s, holdingLock: false)
            for (position, item) in items.enumerated() where s.log.entries[item] != nil {
                try body(position, try ItemPayload.secret(cutFrom: try payload(of: item, in: s)))
            }
        }
    }

    // MARK: Writing

    public func setLabel(_ label: String) throws(CofferError) {
        try Limits.validate(label: label)
        try withAppend { s throws(CofferError) in
            (Records(frames: try metaRecord(label: label, access: try access(in: &s), in: s)), ())
        }
    }

    public func commit(_ changes: [ItemChange]) throws(CofferError) -> [ChangedItem] {
        var changes = changes
        var changed: [ChangedItem] = []
        try commit(&changes) { changed = $0 }
        return changed
    }

    public func commit(_ changes: inout [ItemChange], acknowledge: ([ChangedItem]) -> Void) throws(CofferError) {
        try commit(&changes, expecting: [:], acknowledge: acknowledge)
    }

    /// As `commit(_:acknowledge:)`, only while each item of `expecting` has its record where
    /// given (nil: no such item), checked under the write lock: else `changedMeanwhile` and
    /// nothing changes. How another device's change is applied without overwriting a local
    /// change made after the last look.
    func commit(_ changes: inout [ItemChange], expecting: [ItemID: Int?],
                acknowledge: ([ChangedItem]) -> Void) throws(CofferError) {
        guard !changes.isEmpty else { return acknowledge([]) }
        _ = try withAppend({ s throws(CofferError) in
            for (item, offset) in expecting where s.log.entries[item]?.offset != offset { throw Self.changedMeanwhile }
            let key = try key(of: s)
            let now = Clock.now()
            var nextID = s.log.nextItemID
            var sequence = s.log.nextSequence
            var batch: [UInt8] = []
            var touched: [ChangedItem] = []
            var written: [(ItemID, ItemMetadata?)] = []
            // One change is its own batch; several end with a commit record vouching for them.
            let endsBatch = changes.count == 1
            for change in changes {
                let (item, metadata, secret): (ItemID, ItemMetadata?, SecureBytes?)
                var isNew = false
                var removedLabel: (@Sendable () -> String?)?
                // The record's public part (its attribute terms), when known without hashing.
                var publicPart: [UInt8]?
                switch change {
                case .insert(let new, let policy):
                    let newTerms = s.hasher.terms(new.attributes)
                    // The item gets exactly these attributes, inserted or overwriting.
                    publicPart = AttributeHasher.encode(newTerms)
                    switch try policy.resolve(existing: s.log.index.items(withExactly: newTerms),
                                              exists: { s.log.entries[$0] != nil }) {
                    case .insert:
                        item = nextID
                        nextID += 1
                        isNew = true
                        metadata = ItemMetadata(label: new.label, attributes: new.attributes, contentType: new.secret.contentType,
                                                created: new.times?.created ?? now, modified: new.times?.modified ?? now,
                                                creator: new.creator)
                        secret = new.secret.bytes
                    case .overwrite(let target):
                        item = target
                        (metadata, secret) = try updated(target, with: ItemChanges(label: new.label, attributes: new.attributes,
                                                                                         secret: new.secret), at: now, in: &s)
                    }
                case .update(let target, let itemChanges):
                    guard s.log.entries[target] != nil else { throw .itemNotFound }
                    item = target
                    (metadata, secret) = try updated(target, with: itemChanges, at: now, in: &s)
                    // Attributes untouched: the terms of the item's record stay (authenticated
                    // with it when its metadata was read, just now or into the cache).
                    if itemChanges.attributes == nil && itemChanges.schema == nil { publicPart = s.log.publicPart(of: target) }
                case .remove(let target):
                    guard s.log.entries[target] != nil else { throw .itemNotFound }
                    (item, metadata, secret) = (target, nil, nil)
                    removedLabel = labelReader(of: target, in: s, key: key)
                }
                if let metadata, let secret {
                    let payload = try ItemPayload.encode(metadata, secret: secret)
                    batch += try RecordFrame.encode(kind: .item, endsBatch: endsBatch, sequence: sequence, timestamp: now, itemID: item,
                                                    publicPart: publicPart ?? AttributeHasher.encode(s.hasher.terms(metadata.attributes)),
                                                    plaintext: payload, key: key, uuid: s.log.header.uuid)
                } else {
                    batch += try RecordFrame.encode(kind: .removal, endsBatch: endsBatch, sequence: sequence, timestamp: now, itemID: item,
                                                    publicPart: [], plaintext: nil, key: key, uuid: s.log.header.uuid)
                }
                sequence += 1
                touched.append(removedLabel.map { ChangedItem(id: item, isNew: false, removedLabel: $0) }
                               ?? ChangedItem(id: item, isNew: isNew, label: metadata?.label))
                written.append((item, metadata))
            }
            if !endsBatch {
                batch += try RecordFrame.encode(kind: .commit, endsBatch: true, sequence: 0, timestamp: now, itemID: 0,
                                                publicPart: RecordFrame.commitPublicPart(vouchingFor: batch[...]),
                                                plaintext: nil, key: key, uuid: s.log.header.uuid)
            }
            return (Records(frames: batch, written: written), touched)
        }, acknowledge: { changed in
            changes = []   // durable: their secrets go before anyone hears of it
            acknowledge(changed)
        })
    }

    /// What a conditional commit throws when an item changed since its caller looked.
    static let changedMeanwhile = CofferError.io("an item changed while another device's change to it was applied; it is tried again")

    // MARK: Item helpers

    func key(of s: State) throws(CofferError) -> DataKey {
        guard let key = s.dataKey else { throw .locked(id.rawValue) }
        return key
    }

    private func payload(of item: ItemID, in s: State) throws(CofferError) -> SecureBytes {
        let key = try key(of: s)
        guard let frame = s.log.frame(of: item) else { throw .itemNotFound }
        do throws(CofferError) {
            return try frame.open(in: s.log.bytes, key: key, uuid: s.log.header.uuid)
        } catch .authenticationFailed {
            throw .storeCorrupt(file: s.log.file, reason: "item \(item) failed authentication")
        }
    }

    /// Reads, when asked, the label `item` has now: from its cached metadata, or else from a
    /// copy of its record (for its removal, so that the commit does not decrypt it).
    private func labelReader(of item: ItemID, in s: State, key: DataKey) -> @Sendable () -> String? {
        if let label = s.metadataCache[item]?.label { return { label } }
        guard let entry = s.log.entries[item] else { return { nil } }
        let record = Array(s.log.bytes[entry.offset..<entry.offset + entry.length])
        let uuid = s.log.header.uuid
        return {
            guard case .frame(let frame) = RecordFrame.parse(record, at: 0, end: record.count, checksum: false) else { return nil }
            return try? ItemPayload.metadata(from: frame.open(in: record, key: key, uuid: uuid)).label
        }
    }

    private func metadata(of item: ItemID, in s: inout State) throws(CofferError) -> ItemMetadata {
        if let cached = s.metadataCache[item] { return cached }
        let metadata = try ItemPayload.metadata(from: try payload(of: item, in: s))
        if s.dataKey != nil { s.metadataCache[item] = metadata }
        return metadata
    }

    /// The metadata and secret an item has after `changes`.
    private func updated(_ item: ItemID, with changes: ItemChanges, at now: UInt64,
                                in s: inout State) throws(CofferError) -> (ItemMetadata, SecureBytes) {
        var metadata = try metadata(of: item, in: &s)
        let secret: SecureBytes
        if let new = changes.secret {
            secret = new.bytes
            metadata.contentType = new.contentType
        } else {
            secret = try ItemPayload.secret(cutFrom: try payload(of: item, in: s)).bytes
        }
        if let label = changes.label { metadata.label = label }
        if let attributes = changes.attributes(replacing: metadata.attributes) { metadata.attributes = attributes }
        metadata.modified = now
        return (metadata, secret)
    }
}
