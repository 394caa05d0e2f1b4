#if canImport(Glibc)
import Glibc
#endif

/// What `stat(2)` tells about a file: which file it is, its kind and its size.
public struct FileStatus: Equatable, Sendable {
    /// What kind of file it is.
    public enum Kind: Sendable {
        case regular, directory, socket, other
    }

    /// The device and inode: together, which file it is.
    public let device: UInt64
    public let inode: UInt64
    public let kind: Kind
    /// The size in bytes.
    public let size: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
    }

    /// The status of the file `path` names now (following symbolic links). A missing file
    /// throws `Errno.noSuchFile`.
    public static func of(_ path: String) throws(Errno) -> FileStatus {
        var info = stat()
        _ = try retryingInterrupted("stat \(path)") { stat(path, &info) }
        return FileStatus(info)
    }
}
