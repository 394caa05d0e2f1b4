#if canImport(Glibc)
import Glibc
#endif

/// Calls on paths rather than open files.
public enum FileSystem {
    /// `rename(2)`: atomically replaces `to` with `from`.
    public static func rename(_ from: String, to: String) throws(Errno) {
        _ = try retryingInterrupted("rename \(from) to \(to)") { Glibc.rename(from, to) }
    }

    /// `link(2)`: a second name for `existing`; fails with `Errno.fileExists` if `new` exists.
    public static func link(_ existing: String, to new: String) throws(Errno) {
        _ = try retryingInterrupted("link \(existing) to \(new)") { Glibc.link(existing, new) }
    }

    /// `unlink(2)`. A missing file throws `Errno.noSuchFile`.
    public static func remove(_ path: String) throws(Errno) {
        _ = try retryingInterrupted("unlink \(path)") { unlink(path) }
    }

    /// `chmod(2)`.
    public static func setPermissions(of path: String, to permissions: UInt32) throws(Errno) {
        _ = try retryingInterrupted("chmod \(path)") { chmod(path, mode_t(permissions)) }
    }

    /// Flushes the directory `path` to disk, so that a creation, rename or removal in it is durable.
    public static func synchronizeDirectory(_ path: String) throws(Errno) {
        let directory = try FileDescriptor.open(path, .readOnly, options: .directory)
        defer { directory.close() }
        try directory.synchronize()
    }

    /// Whether `path` names anything (`access(2)` with F_OK).
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Whether this process may create and change files in the directory `path`.
    public static func isWritableDirectory(_ path: String) -> Bool { access(path, W_OK | X_OK) == 0 }

    /// The whole contents of the file `path`, read to end of file (so also files whose size
    /// says 0, such as those in /proc).
    public static func contents(of path: String) throws(Errno) -> [UInt8] {
        let file = try FileDescriptor.open(path, .readOnly)
        defer { file.close() }
        return try file.readAll()
    }

    /// What the symbolic link `path` points to (`readlink(2)`), or nil when it is none or
    /// cannot be read (e.g. `/proc/<pid>/exe` of another user's process).
    public static func symbolicLinkTarget(_ path: String) -> String? {
        try? readSymbolicLink(path)
    }

    /// What the symbolic link `path` points to (`readlink(2)`); throws `Errno` when `path` is
    /// no symbolic link (EINVAL), is missing (ENOENT) or may not be read (EACCES).
    public static func readSymbolicLink(_ path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = try retryingInterrupted("readlink \(path)") { readlink(path, &buffer, buffer.count - 1) }
        guard length > 0 else { throw Errno(ENOENT, operation: "readlink \(path)") }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `path` is a regular file this process may execute.
    public static func isExecutableFile(_ path: String) -> Bool {
        (try? FileStatus.of(path).kind) == .regular && access(path, X_OK) == 0
    }

    /// `name` if it contains a `/` and is an executable file, else the first executable file
    /// called `name` in the `:`-separated `searchPath` (as a shell finds a command).
    public static func executable(named name: String, searchPath: String) -> String? {
        if name.contains("/") { return isExecutableFile(name) ? name : nil }
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let dir = directory.isEmpty ? "." : String(directory)
            let candidate = dir.hasSuffix("/") ? dir + name : dir + "/" + name
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }
}
