import SystemKit
import Testing

@Suite struct FileSystemKindTests {
    /// The test's own directory is on a disk or memory file system (ext4, tmpfs, overlayfs …).
    @Test func aTemporaryDirectoryIsLocal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try FileSystemKind.of(directory.path).changesAreAllLocal)
        #expect(try FileSystemKind.of("/dev/shm") == FileSystemKind(magic: 0x0102_1994))   // tmpfs
    }

    /// procfs's files change without any write, and NFS's on other machines: neither is local.
    @Test func procfsNFSAndUnknownKindsAreNot() throws {
        #expect(try FileSystemKind.of("/proc") == FileSystemKind(magic: 0x9FA0))
        #expect(!FileSystemKind(magic: 0x9FA0).changesAreAllLocal)
        #expect(!FileSystemKind(magic: 0x6969).changesAreAllLocal)          // NFS
        #expect(!FileSystemKind(magic: 0x6573_5546).changesAreAllLocal)     // FUSE
        #expect(!FileSystemKind(magic: 0).changesAreAllLocal)
    }

    @Test func aMissingPathThrows() {
        #expect(throws: Errno.noSuchFile) { try FileSystemKind.of("/nonexistent-\(ProcessControl.currentID)") }
    }
}
