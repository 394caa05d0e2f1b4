import CofferCore
import CofferCrypto
import FoundationEssentials
import Synchronization
import SystemKit

/// The encrypted on-disk store: one `<id>.coffer` file per collection (plus a `<id>.lock`
/// file for locking between processes, which also holds its `AcknowledgementMark`) and an
/// `aliases` file, in a directory only its owner can read (0700; files 0600).
public final class FileStore: CollectionProvider, Sendable {
    public let directory: String
    private let kdf: Argon2Parameters
    private let warn: @Sendable (String) -> Void
    private let beforeFlush: @Sendable () -> Void
    /// What the unlock throttle reads the time from (the process's clock, or a test's).
    private let clock: TimeSource
    private let watch: DirectoryWatch
    private let cache: Mutex<Cache>

    /// The collection ids and aliases as last read, kept until the watch reports a change.
    private struct Cache {
        var ids: [CollectionID]?
        var idsMark = DirectoryWatch.Mark()
        var aliases: [String: CollectionID]?
        var aliasesMark = DirectoryWatch.Mark()
    }

    static let storeExtension = ".coffer"

    /// Where the store lives unless told otherwise: `$COFFER_DATA_DIR`, else
    /// `$XDG_DATA_HOME/coffer`, else `~/.local/share/coffer`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["COFFER_DATA_DIR"], !explicit.isEmpty { return explicit }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/coffer" }
        let home = environment["HOME"] ?? FileSystem.homeDirectoryOfThisUser()
        return home + "/.local/share/coffer"
    }

    /// Opens (creating if needed, mode 0700) the store directory. `kdf` is used for new
    /// collections and password changes (by default `TestKeyDerivation`'s choice: production
    /// Argon2id unless a debug build runs under the tests); `warn` receives recoverable problems (a torn tail).
    /// With `watchChanges` (the default) inotify tells when other processes changed a file,
    /// where it can tell every change (on a local file system); without it, and on network
    /// file systems, every read looks at the files.
    public convenience init(directory: String, kdf: Argon2Parameters? = nil, watchChanges: Bool = true,
                            warn: @escaping @Sendable (String) -> Void = FileStore.warnOnStandardError) throws(CofferError) {
        let chosen: Argon2Parameters
        if let kdf { chosen = kdf } else { chosen = try TestKeyDerivation.parameters() }
        try self.init(directory: directory, kdf: chosen, watchChanges: watchChanges, warn: warn, beforeFlush: {})
    }

    /// The same, with `beforeFlush` called by each appending writer right before it flushes its
    /// records to the disk (tests hold a flush there to see what others may do meanwhile), and
    /// the throttle reading `clock`.
    init(directory: String, kdf: Argon2Parameters, watchChanges: Bool, warn: @escaping @Sendable (String) -> Void,
         beforeFlush: @escaping @Sendable () -> Void, clock: TimeSource = Clock.source) throws(CofferError) {
        self.directory = directory
        self.kdf = kdf
        self.warn = warn
        self.beforeFlush = beforeFlush
        self.clock = clock
        try Self.makeDirectory(directory)
        watch = DirectoryWatch(directory: watchChanges ? directory : nil) {
            $0.hasSuffix(Self.storeExtension) || $0 == Self.aliasName
        }
        cache = Mutex(Cache())
    }

    public static let warnOnStandardError: @Sendable (String) -> Void = { message in
        try? FileDescriptor.standardError.writeAll(Array("coffer: warning: \(message)\n".utf8))
    }

    // MARK: Inspecting without changing anything

    /// The ids of the collections in `directory` (its `<id>.coffer` files), sorted. Reads
    /// the directory only: it is neither created nor changed.
    public static func collectionIDs(in directory: String) throws(CofferError) -> [CollectionID] {
        let names: [String]
        do {
            names = try FileSystem.names(in: directory)
        } catch {
            throw .io("cannot list \(directory): \(error.reason)")
        }
        return names.compactMap { name -> CollectionID? in
            guard name.hasSuffix(storeExtension) else { return nil }
            return CollectionID(String(name.dropLast(storeExtension.count)))
        }.sorted()
    }

    /// What collection `id`'s file in `directory` says of it without its password (so it is
    /// reported locked), read under the store's shared lock when its lock file exists, and
    /// without creating, writing or setting anything aside: for diagnostics (`coffer doctor`).
    /// A file damaged before its end throws `CofferError.storeCorrupt`; damage at the end,
    /// acknowledged records found missing, or damage set aside earlier, is in `recovery`.
    public static func inspect(directory: String, id: CollectionID) throws(CofferError) -> CollectionInfo {
        let path = storePath(directory, id)
        let lockFile = try PosixFile.identity(of: lockPath(directory, id)) == nil
            ? nil : try PosixFile(path: lockPath(directory, id), writable: false)
        try lockFile?.lock(.shared)
        defer { lockFile?.unlock() }
        guard try PosixFile.identity(of: path) != nil else { throw .collectionNotFound(id.rawValue) }
        let file = try PosixFile(path: path, writable: false)
        var log = try CollectionLog(file: path, bytes: try file.read(at: 0, count: try file.status().size))
        if let lockFile { log.note(AcknowledgementMark.read(from: lockFile)) }
        // Its ways in: format 2 needs a keys file, and any keys file must read and be its own
        // (what only the key can tell, that the slots were not changed, waits for an unlock).
        let keysPath = KeySlotsFile.path(directory, id)
        let slots = try KeySlotsFile.read(directory: directory, id: id)
        if slots == nil, log.header.formatVersion >= 2 {
            throw .storeCorrupt(file: keysPath, reason: "it is missing, and it holds every way into the collection")
        }
        if let slots, slots.uuid != log.header.uuid { throw .storeCorrupt(file: keysPath, reason: "it belongs to another collection") }
        return CollectionInfo(id: id, label: log.label, created: log.header.created, modified: log.modified,
                              isLocked: true, itemCount: log.entries.count,
                              recovery: FileCollection.recovery(of: log, path: path))
    }

    static func storeName(_ id: CollectionID) -> String { id.rawValue + storeExtension }
    static func storePath(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(storeName(id))" }
    static func lockPath(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue).lock" }
    private static let aliasName = "aliases"
    private var aliasPath: String { "\(directory)/\(Self.aliasName)" }

    // MARK: CollectionProvider

    /// Re-read only when the directory watch reports a change (a directory's modification
    /// time ticks too coarsely to tell two changes apart, so it is not trusted).
    public func collectionIDs() throws(CofferError) -> [CollectionID] {
        let cached = cache.withLock { c in
            // On a change the listing is dropped at once, so that no other thread serves it.
            if c.ids != nil && watch.changed(DirectoryWatch.listing, since: &c.idsMark) { c.ids = nil }
            return c.ids
        }
        if let cached { return cached }
        let mark = watch.mark()
        let ids = try Self.collectionIDs(in: directory)
        cache.withLock { c in
            c.ids = ids
            c.idsMark = mark
        }
        return ids
    }

    public func open(_ id: CollectionID) throws(CofferError) -> any CollectionBackend {
        try fileCollection(id)
    }

    /// The collection `id`, with what only a file collection has (its key slots).
    package func fileCollection(_ id: CollectionID) throws(CofferError) -> FileCollection {
        try FileCollection(id: id, directory: directory, watch: watch, kdf: kdf, warn: warn, beforeFlush: beforeFlush, clock: clock)
    }

    public func create(_ id: CollectionID, label: String, password: SecureBytes,
                       access: CollectionAccess) throws(CofferError) -> any CollectionBackend {
        UnlockThrottle(directory: directory, collection: id).reset()   // left by an older collection of that id
        let collection = try FileCollection.create(id: id, directory: directory, watch: watch, label: label,
                                                   password: password, access: access, kdf: kdf, warn: warn, beforeFlush: beforeFlush, clock: clock)
        cache.withLock { $0.ids = nil }
        return collection
    }

    /// Removes the collection's file under its exclusive lock (the lock file stays, so that
    /// processes still holding it keep excluding each other).
    public func delete(_ id: CollectionID) throws(CofferError) {
        let lock = try PosixFile(path: Self.lockPath(directory, id), create: true)
        try lock.lock(.exclusive)
        defer { lock.unlock() }
        guard try PosixFile.identity(of: Self.storePath(directory, id)) != nil else {
            throw .collectionNotFound(id.rawValue)
        }
        try PosixFile.remove(Self.storePath(directory, id))
        // Its keys go with it (a creation of the id replaces any left behind).
        try? PosixFile.remove(KeySlotsFile.path(directory, id))
        // Its audit key goes too (what it sealed cannot be opened without the collection).
        try? PosixFile.remove(AuditKey.path(directory, id))
        // Wrong passwords given for it go with it: a new collection of that id starts clean.
        UnlockThrottle(directory: directory, collection: id).reset()
        try PosixFile.syncDirectory(directory)
        cache.withLock { $0.ids = nil }
    }

    /// Re-read only when the directory watch reports a change.
    public func aliases() throws(CofferError) -> [String: CollectionID] {
        let cached = cache.withLock { c in
            if c.aliases != nil && watch.changed(Self.aliasName, since: &c.aliasesMark) { c.aliases = nil }
            return c.aliases
        }
        if let cached { return cached }
        let mark = watch.mark()
        let table = try readAliases()
        cache.withLock { c in
            c.aliases = table
            c.aliasesMark = mark
        }
        return table
    }

    private func readAliases() throws(CofferError) -> [String: CollectionID] {
        try Self.inspectAliases(directory: directory)
    }

    /// The alias table of the store in `directory` (`default` and the others), read without
    /// changing anything: none when there is no alias file, an error when it cannot be read.
    public static func inspectAliases(directory: String) throws(CofferError) -> [String: CollectionID] {
        let aliasPath = "\(directory)/\(aliasName)"
        guard try PosixFile.identity(of: aliasPath) != nil else { return [:] }
        let file = try PosixFile(path: aliasPath, writable: false)
        let data = try file.read(at: 0, count: try file.status().size)
        var table: [String: CollectionID] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let target = CollectionID(String(parts[1])) else { continue }
            table[String(parts[0])] = target
        }
        return table
    }

    /// Rewrites the alias table atomically (`FileSystem.replace`: a new file renamed over it).
    public func setAlias(_ name: String, to collection: CollectionID?) throws(CofferError) {
        let lock = try PosixFile(path: "\(directory)/aliases.lock", create: true)
        try lock.lock(.exclusive)
        defer { lock.unlock() }
        var table = try readAliases()
        table[name] = collection
        let text = table.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)\n" }.joined()
        try PosixFile.replace(aliasPath, with: Array(text.utf8))
        cache.withLock { $0.aliases = nil }
    }

    // MARK: Directory

    private static func makeDirectory(_ path: String) throws(CofferError) {
        do {
            try FileSystem.makeDirectories(path, permissions: 0o700)
        } catch {
            throw .io("cannot create \(path): \(error.reason)")
        }
        try PosixFile.setPermissions(of: path, to: 0o700)
        // Temporary files a crash left behind hold nothing that is not in the real files.
        let names = (try? FileSystem.names(in: path)) ?? []
        for name in names where name.contains(".coffer.compact-") || name.contains(".coffer.new-") || name.hasPrefix("aliases.new-")
                                || name.contains(KeySlotsFile.fileExtension + ".new-") {
            if let pid = Int32(name.split(separator: "-").last ?? ""), pid != ProcessControl.currentID,
               !ProcessControl.isRunning(pid) {
                try? PosixFile.remove("\(path)/\(name)")
            }
        }
    }
}
