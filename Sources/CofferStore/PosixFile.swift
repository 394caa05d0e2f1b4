#if canImport(Glibc)
import Glibc
#endif
import CofferCore

/// A file descriptor with the few calls the store needs, each turning errno into a
/// `CofferError.io` that names the file and says what to do about it.
final class PosixFile {
    let path: String
    private(set) var descriptor: Int32

    /// Opens `path`; with `create`, creates it with mode 0600 (and forces 0600 either way).
    init(path: String, writable: Bool = true, create: Bool = false, exclusive: Bool = false) throws(CofferError) {
        self.path = path
        var flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC
        if create { flags |= O_CREAT }
        if exclusive { flags |= O_EXCL }
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else { throw Self.error("cannot open", path) }
        descriptor = fd
        if create && fchmod(fd, 0o600) != 0 { throw Self.error("cannot set permissions of", path) }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    /// Device, inode and size of the open file.
    func status() throws(CofferError) -> (identity: Identity, size: Int) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.error("cannot stat", path) }
        return (Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int(info.st_size))
    }

    /// Device and inode of whatever file `path` names now, or nil if there is none.
    static func identity(of path: String) throws(CofferError) -> (identity: Identity, size: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw error("cannot stat", path)
        }
        return (Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int(info.st_size))
    }

    /// Reads `count` bytes at `offset` (fewer only at end of file).
    func read(at offset: Int, count: Int) throws(CofferError) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            var chunk = [UInt8](repeating: 0, count: count - result.count)
            let n = pread(descriptor, &chunk, chunk.count, off_t(offset + result.count))
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot read", path)
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
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
        var pending = bytes
        var position = offset
        while !pending.isEmpty {
            let n = pwrite(descriptor, pending, pending.count, off_t(position))
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot write", path)
            }
            position += n
            pending.removeFirst(n)
        }
    }

    func truncate(to size: Int) throws(CofferError) {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw Self.error("cannot truncate", path) }
    }

    /// Waits until written data reaches the disk.
    func sync() throws(CofferError) {
        guard fdatasync(descriptor) == 0 else { throw Self.error("cannot flush", path) }
    }

    enum LockMode { case shared, exclusive }

    /// Blocks until this process holds an advisory lock of `mode` on the file.
    func lock(_ mode: LockMode) throws(CofferError) {
        while flock(descriptor, mode == .shared ? LOCK_SH : LOCK_EX) != 0 {
            if errno != EINTR { throw Self.error("cannot lock", path) }
        }
    }

    func unlock() { _ = flock(descriptor, LOCK_UN) }

    /// Flushes a directory so that a rename or creation in it is durable.
    static func syncDirectory(_ path: String) throws(CofferError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw error("cannot open directory", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw error("cannot flush directory", path) }
    }

    static func rename(_ from: String, to: String) throws(CofferError) {
        guard Glibc.rename(from, to) == 0 else { throw error("cannot rename \(from) to", to) }
    }

    static func remove(_ path: String) throws(CofferError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw error("cannot remove", path) }
    }

    /// An io error for `action` on `path` from the current errno, with advice for the usual causes.
    static func error(_ action: String, _ path: String) -> CofferError {
        let code = errno
        let reason = String(cString: strerror(code))
        let advice: String
        switch code {
        case ENOSPC, EDQUOT: advice = "; free some disk space and try again"
        case EACCES, EPERM: advice = "; check the permissions of the data directory"
        case EROFS: advice = "; the file system is read-only"
        default: advice = ""
        }
        return .io("\(action) \(path): \(reason)\(advice)")
    }
}
