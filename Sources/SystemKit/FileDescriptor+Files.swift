#if canImport(Glibc)
import Glibc
#endif

/// Regular files: opening, positional I/O, size, durability and advisory locks.
extension FileDescriptor {
    /// How a file is opened.
    public enum AccessMode: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// Flags for `open`; close-on-exec is always set.
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// O_CREAT: create the file if it is missing.
        public static let create = OpenOptions(rawValue: O_CREAT)
        /// O_EXCL: with `create`, fail with EEXIST if the file exists.
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// O_APPEND: every write goes to the end of the file.
        public static let append = OpenOptions(rawValue: O_APPEND)
        /// O_DIRECTORY: fail unless the path is a directory.
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
        /// O_NOCTTY: opening a terminal does not make it the controlling terminal.
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
        /// O_NOFOLLOW: fail (ELOOP, `Errno.symbolicLink`) when the last component of the path is a symbolic link.
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        /// O_NONBLOCK: opening a FIFO or device does not wait (nor do reads from them).
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
    }

    /// Opens `path`; a file that `options` creates gets `permissions`.
    public static func open(_ path: String, _ mode: AccessMode, options: OpenOptions = [],
                            permissions: UInt32 = 0o600) throws(Errno) -> FileDescriptor {
        let flags = mode.flags | options.rawValue | O_CLOEXEC
        return FileDescriptor(rawValue: try retryingInterrupted("open \(path)") {
            Glibc.open(path, flags, mode_t(permissions))
        })
    }

    /// `count` bytes from `offset` (fewer only at end of file), as many `pread(2)` calls as it
    /// takes: the first reads into the result; after a short read, the rest comes a piece at a
    /// time.
    public func read(at offset: Int, upTo count: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n: Int
            if filled == 0 {
                n = try retryingInterrupted("pread") { pread(rawValue, &bytes, count, off_t(offset)) }
            } else {
                var rest = [UInt8](repeating: 0, count: count - filled)
                n = try retryingInterrupted("pread") { pread(rawValue, &rest, rest.count, off_t(offset + filled)) }
                bytes.replaceSubrange(filled..<filled + n, with: rest[..<n])
            }
            if n == 0 { break }
            filled += n
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    /// Writes all of `bytes` at `offset`, as many `pwrite(2)` calls as it takes.
    public func writeAll(_ bytes: [UInt8], at offset: Int) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let rest = done == 0 ? bytes : Array(bytes[done...])
            done += try retryingInterrupted("pwrite") { pwrite(rawValue, rest, rest.count, off_t(offset + done)) }
        }
    }

    /// `fstat(2)`: what the descriptor refers to.
    public func status() throws(Errno) -> FileStatus {
        var info = stat()
        _ = try retryingInterrupted("fstat") { fstat(rawValue, &info) }
        return FileStatus(info)
    }

    /// The file offset (`lseek(2)` by 0 from the current position). After a write on an
    /// `O_APPEND` descriptor: where that write ended, so the file's size then.
    public func currentOffset() throws(Errno) -> Int {
        Int(try retryingInterrupted("lseek") { lseek(rawValue, 0, SEEK_CUR) })
    }

    /// `fchmod(2)`.
    public func setPermissions(_ permissions: UInt32) throws(Errno) {
        _ = try retryingInterrupted("fchmod") { fchmod(rawValue, mode_t(permissions)) }
    }

    /// `ftruncate(2)`: cuts or extends the file to `size` bytes.
    public func truncate(to size: Int) throws(Errno) {
        _ = try retryingInterrupted("ftruncate") { ftruncate(rawValue, off_t(size)) }
    }

    /// `fdatasync(2)`: returns once the written data is on the disk.
    public func synchronizeData() throws(Errno) {
        TestFlushDelay.wait()
        _ = try retryingInterrupted("fdatasync") { fdatasync(rawValue) }
    }

    /// `fsync(2)`: data and metadata (for a directory: its entries) reach the disk.
    public func synchronize() throws(Errno) {
        TestFlushDelay.wait()
        _ = try retryingInterrupted("fsync") { fsync(rawValue) }
    }

    /// A `flock(2)` advisory lock.
    public enum LockMode: Sendable { case shared, exclusive }

    /// Blocks until this open file holds a `flock(2)` lock of `mode`.
    public func lock(_ mode: LockMode) throws(Errno) {
        _ = try retryingInterrupted("flock") { flock(rawValue, mode == .shared ? LOCK_SH : LOCK_EX) }
    }

    /// Drops the `flock(2)` lock.
    public func unlock() { _ = flock(rawValue, LOCK_UN) }
}
