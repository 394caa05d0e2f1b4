import CofferCore
import CofferCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The encrypted on-disk store: one `<id>.coffer` file per collection (plus a `<id>.lock`
/// file for locking between processes) and an `aliases` file, in a directory only its owner
/// can read (0700; files 0600).
public final class FileStore: CollectionProvider, @unchecked Sendable {
    public let directory: String
    private let kdf: Argon2Parameters
    private let warn: @Sendable (String) -> Void
    private let listing = Locked<Listing?>(nil)

    /// The collection ids as last read.
    private struct Listing {
        var ids: [CollectionID]
        var recentCheck = RecentCheck()
    }

    static let storeExtension = ".coffer"

    /// Where the store lives unless told otherwise: `$COFFER_DATA_DIR`, else
    /// `$XDG_DATA_HOME/coffer`, else `~/.local/share/coffer`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["COFFER_DATA_DIR"], !explicit.isEmpty { return explicit }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/coffer" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/coffer"
    }

    /// Opens (creating if needed, mode 0700) the store directory. `kdf` is used for new
    /// collections and password changes; `warn` receives recoverable problems (a torn tail).
    public init(directory: String, kdf: Argon2Parameters = .default,
                warn: @escaping @Sendable (String) -> Void = FileStore.warnOnStandardError) throws(CofferError) {
        self.directory = directory
        self.kdf = kdf
        self.warn = warn
        try Self.makeDirectory(directory)
    }

    public static let warnOnStandardError: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("coffer: warning: \(message)\n".utf8))
    }

    static func storePath(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue)\(storeExtension)" }
    static func lockPath(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue).lock" }
    private var aliasPath: String { "\(directory)/aliases" }

    // MARK: CollectionProvider

    /// Re-read at most every `RecentCheck.window`: a directory's modification time ticks too
    /// coarsely to tell two changes apart, so it is not trusted.
    public func collectionIDs() throws(CofferError) -> [CollectionID] {
        if let fresh = listing.withLock({ $0?.recentCheck.isFresh == true ? $0?.ids : nil }) { return fresh }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .io("cannot list \(directory): \(error.localizedDescription)")
        }
        let ids = names.compactMap { name -> CollectionID? in
            guard name.hasSuffix(Self.storeExtension) else { return nil }
            return CollectionID(String(name.dropLast(Self.storeExtension.count)))
        }.sorted()
        var fresh = Listing(ids: ids)
        fresh.recentCheck.checked()
        listing.withLock { $0 = fresh }
        return ids
    }

    public func open(_ id: CollectionID) throws(CofferError) -> any CollectionBackend {
        try FileCollection(id: id, directory: directory, kdf: kdf, warn: warn)
    }

    public func create(_ id: CollectionID, label: String, password: SecureBytes) throws(CofferError) -> any CollectionBackend {
        let collection = try FileCollection.create(id: id, directory: directory, label: label, password: password,
                                                   kdf: kdf, warn: warn)
        listing.withLock { $0 = nil }
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
        try PosixFile.syncDirectory(directory)
        listing.withLock { $0 = nil }
    }

    public func aliases() throws(CofferError) -> [String: CollectionID] {
        guard let data = FileManager.default.contents(atPath: aliasPath) else { return [:] }
        var table: [String: CollectionID] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let target = CollectionID(String(parts[1])) else { continue }
            table[String(parts[0])] = target
        }
        return table
    }

    /// Rewrites the alias table atomically (temporary file, fsync, rename, directory fsync).
    public func setAlias(_ name: String, to collection: CollectionID?) throws(CofferError) {
        let lock = try PosixFile(path: "\(directory)/aliases.lock", create: true)
        try lock.lock(.exclusive)
        defer { lock.unlock() }
        var table = try aliases()
        table[name] = collection
        let text = table.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)\n" }.joined()
        let temporary = "\(aliasPath).new-\(getpid())"
        let file = try PosixFile(path: temporary, create: true)
        try file.truncate(to: 0)
        try file.write(Array(text.utf8), at: 0)
        try file.sync()
        try PosixFile.rename(temporary, to: aliasPath)
        try PosixFile.syncDirectory(directory)
    }

    // MARK: Directory

    private static func makeDirectory(_ path: String) throws(CofferError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create \(path): \(error.localizedDescription)")
        }
        guard chmod(path, 0o700) == 0 else { throw PosixFile.error("cannot set permissions of", path) }
        // Temporary files a crash left behind hold nothing that is not in the real files.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for name in names where name.contains(".coffer.compact-") || name.contains(".coffer.new-") || name.hasPrefix("aliases.new-") {
            if let pid = Int32(name.split(separator: "-").last ?? ""), pid != getpid(), kill(pid, 0) != 0 {
                try? PosixFile.remove("\(path)/\(name)")
            }
        }
    }
}
