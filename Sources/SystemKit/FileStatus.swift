#if canImport(Glibc)
import Glibc
#endif

/// What `stat(2)` tells about a file: which file it is, its kind, size, owner and permissions.
public struct FileStatus: Equatable, Sendable {
    /// What kind of file it is.
    public enum Kind: Sendable {
        case regular, directory, socket, symbolicLink, other
    }

    /// The device and inode: together, which file it is (`node`).
    public let device: UInt64
    public let inode: UInt64
    public let kind: Kind

    /// Which file it is, whatever name it is reached by.
    public var node: FileNode { FileNode(device: device, inode: inode) }
    /// The size in bytes.
    public let size: Int
    /// The permission bits (e.g. 0o700), without the kind.
    public let permissions: UInt32
    /// The user id of the owner.
    public let owner: UInt32
    /// How many directory entries name the file (hard links).
    public let linkCount: Int
    /// When the contents last changed (settable with `utimensat`), and when the inode last
    /// changed (contents, owner, permissions, links; not settable by its owner).
    public let modificationTime: Time
    public let changeTime: Time

    /// A file time: seconds and nanoseconds since 1970.
    public struct Time: Hashable, Sendable {
        public let seconds: Int64
        public let nanoseconds: Int64
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        permissions = UInt32(info.st_mode & 0o7777)
        owner = UInt32(info.st_uid)
        linkCount = Int(info.st_nlink)
        modificationTime = Time(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
        changeTime = Time(seconds: Int64(info.st_ctim.tv_sec), nanoseconds: Int64(info.st_ctim.tv_nsec))
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFSOCK: kind = .socket
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
    }

    /// The status of the file `path` names now, following symbolic links unless
    /// `followingLinks` is false (then a link's own status). A missing file throws
    /// `Errno.noSuchFile`.
    public static func of(_ path: String, followingLinks: Bool = true) throws(Errno) -> FileStatus {
        var info = stat()
        if followingLinks {
            _ = try retryingInterrupted("stat \(path)") { stat(path, &info) }
        } else {
            _ = try retryingInterrupted("lstat \(path)") { lstat(path, &info) }
        }
        return FileStatus(info)
    }
}
