import CProcess

/// The kind of file system a path lies on, as `statfs(2)` names it (its magic number).
public struct FileSystemKind: Equatable, Sendable {
    /// The number `statfs` reports in `f_type`.
    public let magic: UInt

    public init(magic: UInt) {
        self.magic = magic
    }

    /// The file system `path` lies on (following symbolic links).
    public static func of(_ path: String) throws(Errno) -> FileSystemKind {
        var magic: UInt = 0
        _ = try retryingInterrupted("statfs \(path)") { cprocess_file_system_magic(path, &magic) }
        return FileSystemKind(magic: magic)
    }

    /// Whether every change to its files is made through this machine's kernel, so that
    /// inotify reports each one: true for the disk and memory file systems listed here. False
    /// for network file systems (a change made on another machine is not reported), for FUSE
    /// (nor is one made inside its daemon), and for any kind not listed.
    public var changesAreAllLocal: Bool {
        Self.local.contains(magic)
    }

    /// ext2/3/4, XFS, Btrfs, tmpfs, ramfs, overlayfs, F2FS, ZFS, bcachefs, JFS, ReiserFS,
    /// NILFS2, FAT, exFAT, NTFS (ntfs3 and the older driver) and HFS+. Not eCryptfs: it is
    /// stacked on another file system, maybe a network one, written to from elsewhere too.
    private static let local: Set<UInt> = [
        0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x8584_58F6, 0x794C_7630, 0xF2F5_2010,
        0x2FC1_2FC1, 0xCA45_1A4E, 0x3153_464A, 0x5265_4973, 0x3434, 0x4D44, 0x2011_BAB0,
        0x7366_746E, 0x5346_544E, 0x482B,
    ]
}
