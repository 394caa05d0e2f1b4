import CofferCore
import SystemKit

/// An open file with the few calls the store needs (through SystemKit), each turning a failure
/// into a `CofferError.io` that names the file and says what to do about it.
final class PosixFile: Sendable {
    let path: String
    private let descriptor: FileDescriptor

    /// Opens `path`; with `create`, creates it with mode 0600 (and forces 0600 either way).
    init(path: String, writable: Bool = true, create: Bool = false, exclusive: Bool = false,
         nonBlocking: Bool = false) throws(CofferError) {
        self.path = path
        var options: FileDescriptor.OpenOptions = []
        if create { options.insert(.create) }
        if exclusive { options.insert(.exclusive) }
        if nonBlocking { options.insert(.nonBlocking) }
        descriptor = try Self.io("cannot open", path) { () throws(Errno) in
            try FileDescriptor.open(path, writable ? .readWrite : .readOnly, options: options)
        }
        if create { try Self.io("cannot set permissions of", path) { () throws(Errno) in try descriptor.setPermissions(0o600) } }
    }

    deinit { descriptor.close() }

    /// `path` opened for reading if it is a regular file, nil if it is something else: opened
    /// without waiting (a FIFO or device put in its place would block the open or a read),
    /// then looked at through the open descriptor, so that nothing swapped in between is read.
    static func openRegularFile(_ path: String) throws(CofferError) -> PosixFile? {
        let file = try PosixFile(path: path, writable: false, nonBlocking: true)
        let kind = try io("cannot stat", path) { () throws(Errno) in try file.descriptor.status().kind }
        return kind == .regular ? file : nil
    }

    /// Device, inode and size of the open file.
    func status() throws(CofferError) -> (identity: FileNode, size: Int) {
        let status = try Self.io("cannot stat", path) { () throws(Errno) in try descriptor.identity() }
        return (status.node, status.size)
    }

    /// Device, inode and size of whatever file `path` names now, or nil if there is none.
    static func identity(of path: String) throws(CofferError) -> (identity: FileNode, size: Int)? {
        do {
            let status = try FileIdentity.of(path)
            return (status.node, status.size)
        } catch {
            if error == .noSuchFile { return nil }
            throw Self.error("cannot stat", path, error)
        }
    }

    /// Reads `count` bytes at `offset` (fewer only at end of file).
    func read(at offset: Int, count: Int) throws(CofferError) -> [UInt8] {
        try Self.io("cannot read", path) { () throws(Errno) in try descriptor.read(at: offset, upTo: count) }
    }

    /// Whether a record may start at `offset`: the file has bytes there before `size` and they
    /// are not the zeros of reserved space (a record's length word is never zero).
    func holdsData(at offset: Int, before size: Int) throws(CofferError) -> Bool {
        guard offset < size else { return false }
        let word = try read(at: offset, count: min(4, size - offset))
        return word.count < 4 || word.contains { $0 != 0 }
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws(CofferError) {
        try Self.io("cannot write", path) { () throws(Errno) in try descriptor.writeAll(bytes, at: offset) }
    }

    func truncate(to size: Int) throws(CofferError) {
        try Self.io("cannot truncate", path) { () throws(Errno) in try descriptor.truncate(to: size) }
    }

    /// Waits until written data reaches the disk.
    func sync() throws(CofferError) {
        try Self.io("cannot flush", path) { () throws(Errno) in try descriptor.synchronizeData() }
    }

    /// Blocks until this process holds an advisory lock of `mode` on the file.
    func lock(_ mode: FileDescriptor.LockMode) throws(CofferError) {
        try Self.io("cannot lock", path) { () throws(Errno) in try descriptor.lock(mode) }
    }

    func unlock() { descriptor.unlock() }

    /// Flushes a directory so that a rename or creation in it is durable.
    static func syncDirectory(_ path: String) throws(CofferError) {
        try io("cannot flush directory", path) { () throws(Errno) in try FileSystem.synchronizeDirectory(path) }
    }

    /// Replaces the file `path` with one holding `bytes` (mode 0600), in one step
    /// (`FileSystem.replace`); on failure the old file is left as it was.
    static func replace(_ path: String, with bytes: [UInt8]) throws(CofferError) {
        try io("cannot write", path) { () throws(Errno) in try FileSystem.replace(path, with: bytes, permissions: 0o600) }
    }

    static func rename(_ from: String, to: String) throws(CofferError) {
        try io("cannot rename \(from) to", to) { () throws(Errno) in try FileSystem.rename(from, to: to) }
    }

    /// Gives the file `existing` the name `new` as well; throws `collectionExists` if `new` exists.
    static func link(_ existing: String, to new: String, id: CollectionID) throws(CofferError) {
        do {
            try FileSystem.link(existing, to: new)
        } catch {
            if error == .fileExists { throw .collectionExists(id.rawValue) }
            throw Self.error("cannot create", new, error)
        }
    }

    static func remove(_ path: String) throws(CofferError) {
        do {
            try FileSystem.remove(path)
        } catch {
            guard error == .noSuchFile else { throw Self.error("cannot remove", path, error) }
        }
    }

    static func setPermissions(of path: String, to permissions: UInt32) throws(CofferError) {
        try io("cannot set permissions of", path) { () throws(Errno) in
            try FileSystem.setPermissions(of: path, to: permissions)
        }
    }

    /// Runs `call`, turning its failure into the io error for `action` on `path`.
    private static func io<R>(_ action: String, _ path: String, _ call: () throws(Errno) -> R) throws(CofferError) -> R {
        do { return try call() } catch { throw Self.error(action, path, error) }
    }

    /// An io error for `action` on `path`, with advice for the usual causes.
    private static func error(_ action: String, _ path: String, _ error: Errno) -> CofferError {
        let advice: String
        switch error {
        case .noSpace, .quotaExceeded: advice = "; free some disk space and try again"
        case .permissionDenied, .notPermitted: advice = "; check the permissions of its directory"
        case .readOnlyFileSystem: advice = "; the file system is read-only"
        default: advice = ""
        }
        return .io("\(action) \(path): \(error.reason)\(advice)")
    }
}
