import SystemKit
import Testing

@Suite struct FileSystemKindTests {
    /// /dev/shm is tmpfs; ext4 is a disk file system.
    @Test func memoryAndDiskFileSystemsAreLocal() throws {
        #expect(try FileSystemKind.of("/dev/shm") == FileSystemKind(magic: 0x0102_1994))
        #expect(try FileSystemKind.of("/dev/shm").changesAreAllLocal)
        #expect(FileSystemKind(magic: 0xEF53).changesAreAllLocal)
    }

    /// procfs's files change without any write, and NFS's on other machines: neither is local.
    @Test func procfsNFSAndUnknownKindsAreNot() throws {
        #expect(try FileSystemKind.of("/proc") == FileSystemKind(magic: 0x9FA0))
        #expect(!FileSystemKind(magic: 0x9FA0).changesAreAllLocal)
        #expect(!FileSystemKind(magic: 0x6969).changesAreAllLocal)          // NFS
        #expect(!FileSystemKind(magic: 0x6573_5546).changesAreAllLocal)     // FUSE
        #expect(!FileSystemKind(magic: 0xF15F).changesAreAllLocal)          // eCryptfs, stacked
        #expect(!FileSystemKind(magic: 0).changesAreAllLocal)
    }

    @Test func aMissingPathThrows() {
        #expect(throws: Errno.noSuchFile) { try FileSystemKind.of("/nonexistent-\(ProcessControl.currentID)") }
    }
}
