import Foundation
import Synchronization
import SystemKit
import Testing

/// Counts SIGUSR1 deliveries (a C signal handler cannot capture anything).
private let interruptions = Atomic<Int>(0)

@Suite struct FileDescriptorTests {
    @Test func writeAllAndReadAllMoveLargeDataThroughAPipe() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { readEnd.close() }
        let data = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }   // far more than a pipe holds
        let writer = Thread {
            try? writeEnd.writeAll(data)
            writeEnd.close()
        }
        writer.start()
        #expect(try readEnd.readAll() == data)
    }

    /// A signal without SA_RESTART makes a blocked read(2) fail with EINTR; the read is retried.
    @Test func aReadInterruptedByASignalIsRetried() throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGUSR1, &action, &previous)
        defer { sigaction(SIGUSR1, &previous, nil) }

        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { readEnd.close(); writeEnd.close() }
        let reader = Mutex<pthread_t?>(nil)
        let result = Mutex<Result<[UInt8], Errno>?>(nil)
        let thread = Thread {
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            reader.withLock { $0 = pthread_self() }
            let read = Result { () throws(Errno) in try readEnd.read(upTo: 16) }
            result.withLock { $0 = read }
        }
        thread.start()
        while reader.withLock({ $0 }) == nil { usleep(1_000) }
        let before = interruptions.load(ordering: .relaxed)
        for _ in 0..<5 {
            usleep(20_000)
            if let target = reader.withLock({ $0 }) { pthread_kill(target, SIGUSR1) }
        }
        while interruptions.load(ordering: .relaxed) < before + 5 { usleep(1_000) }
        let early = result.withLock { $0 }
        #expect(early == nil, "the read returned before any data was written")
        try writeEnd.writeAll(Array("after the signals".utf8))
        var read: Result<[UInt8], Errno>?
        while read == nil {
            usleep(1_000)
            read = result.withLock { $0 }
        }
        #expect(try read?.get() == Array("after the signal".utf8))
    }

    @Test func aNonBlockingReadWithNothingThereThrowsWouldBlockAndPollWaits() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { readEnd.close() }
        try readEnd.setNonBlocking()
        #expect(throws: Errno.wouldBlock) { try readEnd.read(upTo: 8) }
        #expect(try readEnd.poll(for: .readable, timeoutMilliseconds: 0).isEmpty)
        #expect(try writeEnd.write([1, 2, 3]) == 3)
        #expect(try readEnd.poll(for: .readable, timeoutMilliseconds: 1000).contains(.readable))
        #expect(try readEnd.read(upTo: 8) == [1, 2, 3])
        writeEnd.close()
        #expect(try readEnd.poll(for: .readable, timeoutMilliseconds: 1000).contains(.hangUp))
        #expect(try readEnd.read(upTo: 8) == [])   // end of file
    }

    @Test func writingToAClosedPipeGivesBrokenPipeWithoutASignal() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { writeEnd.close() }
        readEnd.close()
        #expect(throws: Errno.brokenPipe) { try writeEnd.writeWithoutSIGPIPE([1]) }
    }

    /// A file's identity (read without its times) is the one `stat` gives, by path and by
    /// descriptor; another file, or the same path after a rename over it, has another.
    @Test func identityIsDeviceInodeAndSize() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/file"
        let file = try FileDescriptor.open(path, .readWrite, options: [.create, .exclusive])
        defer { file.close() }
        try file.writeAll(Array("twelve bytes".utf8), at: 0)
        let status = try FileStatus.of(path)
        let identity = try file.identity()
        #expect(identity.device == status.device && identity.inode == status.inode && identity.size == 12)
        #expect(try FileIdentity.of(path) == identity)
        #expect(throws: Errno.noSuchFile) { try FileIdentity.of(directory.path + "/missing") }

        let other = try FileDescriptor.open(directory.path + "/other", .readWrite, options: [.create])
        defer { other.close() }
        #expect(try other.identity().inode != identity.inode)
        #expect(rename(directory.path + "/other", path) == 0)
        #expect(try FileIdentity.of(path) == other.identity())
        #expect(try file.identity() == identity)
    }

    @Test func positionalReadsAndWritesLocksAndStatus() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/file"
        let file = try FileDescriptor.open(path, .readWrite, options: [.create, .exclusive])
        defer { file.close() }
        #expect(throws: Errno.fileExists) { try FileDescriptor.open(path, .readWrite, options: [.create, .exclusive]) }
        try file.writeAll(Array("hello world".utf8), at: 0)
        try file.writeAll(Array("W".utf8), at: 6)
        try file.synchronizeData()
        #expect(try file.read(at: 6, upTo: 100) == Array("World".utf8))
        #expect(try file.status().size == 11)
        #expect(try file.status() == FileStatus.of(path))
        #expect(try FileStatus.of(path).kind == .regular)
        #expect(try FileStatus.of(directory.path).kind == .directory)
        try file.truncate(to: 5)
        #expect(try file.read(at: 0, upTo: 100) == Array("hello".utf8))

        try file.lock(.exclusive)
        let other = try FileDescriptor.open(path, .readOnly)
        defer { other.close() }
        let gotLock = Atomic<Bool>(false)
        let locker = Thread {
            try? other.lock(.shared)
            gotLock.store(true, ordering: .relaxed)
            other.unlock()
        }
        // A second open file cannot take a lock the first holds …
        let refused = flock(other.rawValue, LOCK_SH | LOCK_NB) == -1 ? errno : 0
        #expect(refused == EWOULDBLOCK, "a second open file got a lock the first holds")
        // … and one waiting for it has it once the first lets go.
        locker.start()
        file.unlock()
        while !gotLock.load(ordering: .relaxed) { usleep(1_000) }
    }

    @Test func pathCallsAndTheirErrors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let a = directory.path + "/a", b = directory.path + "/b", c = directory.path + "/c"
        let error = #expect(throws: Errno.self) { try FileDescriptor.open(a, .readOnly) }
        #expect(error == .noSuchFile)
        #expect(error?.description == "open \(a) failed: No such file or directory")
        try FileDescriptor.open(a, .writeOnly, options: .create).close()
        #expect(FileSystem.exists(a))
        try FileSystem.link(a, to: b)
        #expect(throws: Errno.fileExists) { try FileSystem.link(a, to: b) }
        try FileSystem.rename(b, to: c)
        #expect(!FileSystem.exists(b) && FileSystem.exists(c))
        try FileSystem.remove(c)
        #expect(throws: Errno.noSuchFile) { try FileSystem.remove(c) }
        try FileSystem.setPermissions(of: a, to: 0o700)
        #expect(FileSystem.isExecutableFile(a))
        #expect(!FileSystem.isExecutableFile(directory.path))
        try FileSystem.synchronizeDirectory(directory.path)
    }
}
