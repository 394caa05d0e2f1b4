import CofferCrypto
import Synchronization
import SystemKit

/// SHA-256 digests of the program files callers run, read through `/proc/PID/exe` (so the file
/// that runs, even once deleted or replaced at its path) and remembered per version of a file
/// (device, inode, size, modification and change time), so that a program is read once however
/// many processes run it (`/usr/bin/python3` for every script). Thread-safe.
final class ExecutableDigests: Sendable {
    /// One version of one file: the change time moves with every write, and cannot be set back.
    private struct FileVersion: Hashable {
        let node: FileNode
        let size: Int
        let modified, changed: FileStatus.Time

        init(_ status: FileStatus) {
            node = status.node
            size = status.size
            modified = status.modificationTime
            changed = status.changeTime
        }
    }

    /// The largest program file read (larger ones have no digest): far beyond any real
    /// program, so that a sparse file of terabytes cannot keep the hashing thread busy.
    static let sizeLimit = 1 << 31

    private let known: Mutex<BoundedCache<FileVersion, [UInt8]>>
    private let filesRead = Atomic<Int>(0)

    init(capacity: Int = 1024) {
        known = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many files were read and hashed (not answered from memory).
    var readCount: Int { filesRead.load(ordering: .relaxed) }

    /// The digest of the file `process` runs, or nil when it cannot be read: the process is
    /// gone, or runs another file by now (it called exec), or the file is over `sizeLimit`.
    /// Blocks while a file is read.
    func digest(of process: ProcessIdentity) -> [UInt8]? {
        guard let file = try? FileDescriptor.open("/proc/\(process.processID)/exe", .readOnly) else { return nil }
        defer { file.close() }
        guard let before = try? file.status(), process.executable.isSameFile(as: before),
              before.size <= Self.sizeLimit else { return nil }
        let version = FileVersion(before)
        if let digest = known.withLock({ $0[version] }) { return digest }
        // Kept only if the file did not change while it was read.
        guard let digest = try? Digest.sha256(readingToEndOf: file),
              let after = try? file.status(), FileVersion(after) == version else { return nil }
        filesRead.add(1, ordering: .relaxed)
        known.withLock { $0.insert(digest, for: version) }
        return digest
    }
}
