#if canImport(Glibc)
import Glibc
#endif

/// Replacing a whole file so that a reader, or a crash, sees either the old file or the new
/// one, never part of one, and a failure loses neither.
extension FileSystem {
    /// Makes `path` a file holding `bytes` with mode `permissions`, replacing whatever file or
    /// link was there, in one step.
    ///
    /// The bytes go first into a new file beside `path` (same directory, so same file system):
    /// `<path>.new-<random>-<pid>`, created with `O_CREAT|O_EXCL|O_NOFOLLOW` and `permissions`
    /// (so never readable by others meanwhile, nor an existing file or a planted link), written
    /// whole and flushed with `fsync(2)`. `rename(2)` then puts it in place of `path`, and the
    /// directory is flushed so that the rename survives a crash. A link at `path` is replaced,
    /// not followed.
    ///
    /// Any failure before the rename (the file cannot be created, a full disk, a file size
    /// limit) leaves `path` exactly as it was and removes the new file; only a failure to flush
    /// the directory comes after `path` was replaced. A crash can leave the new file behind:
    /// its name ends with the id of the process that wrote it.
    public static func replace(_ path: String, with bytes: [UInt8], permissions: UInt32) throws(Errno) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let (temporary, file) = try createBeside(path, permissions: permissions)
        do throws(Errno) {
            defer { file.close() }
            // Exactly `permissions`: the umask may have narrowed them at creation.
            try file.setPermissions(permissions)
            try file.writeAll(bytes)
            try file.synchronize()
        } catch {
            try? remove(temporary)
            throw error
        }
        do {
            try rename(temporary, to: path)
        } catch {
            try? remove(temporary)
            throw error
        }
        try synchronizeDirectory(directory)
    }

    /// A new file named after `path` that did not exist before (a name taken is tried again
    /// with another random part), open for writing. A long name is shortened to leave room
    /// for the suffix within NAME_MAX.
    private static func createBeside(_ path: String, permissions: UInt32) throws(Errno) -> (String, FileDescriptor) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { path[...$0] } ?? ""
        let name = slash.map { path[path.index(after: $0)...] } ?? path[...]
        var attempts = 0
        while true {
            let suffix = ".new-\(Hex.encode(randomBytes(8)))-\(ProcessControl.currentID)"
            var prefix = name
            while prefix.utf8.count + suffix.utf8.count > Int(NAME_MAX) { prefix.removeLast() }
            let temporary = String(directory + prefix) + suffix
            do {
                let file = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusive, .noFollow],
                                                   permissions: permissions)
                return (temporary, file)
            } catch {
                attempts += 1
                guard error == .fileExists, attempts < 100 else { throw error }
            }
        }
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in generator.next() }
    }
}
