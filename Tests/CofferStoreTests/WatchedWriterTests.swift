import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import Synchronization
import SystemKit
import Testing

/// A writer trusts the directory watch as readers do: it catches up with a collection file
/// only when the watch reports a change. So the watch must report every change a writer has
/// not made itself, its own writes passing over nothing else, and it must answer "changed"
/// wherever it cannot see every change.
@Suite struct WatchedWriterTests {
    func fileIn(_ directory: String, _ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
    }

    @Test func aWritersOwnWritesArePassedOverButNotAReplacementOrRemoval() throws {
        let fixture = try StoreFixture()
        try FileSystem.makeDirectories(fixture.directory, permissions: 0o700)
        try fileIn(fixture.directory, "a.coffer", [1])
        let watch = DirectoryWatch(directory: fixture.directory) { $0.hasSuffix(".coffer") }
        var mark = watch.mark()

        // Written in place (as a writer appends): passed over.
        let file = try FileDescriptor.open("\(fixture.directory)/a.coffer", .writeOnly)
        try file.writeAll([2, 3])
        file.close()
        watch.absorbOwnWrites(to: "a.coffer", since: &mark)
        #expect(!watch.changed("a.coffer", since: &mark))

        // Replaced through a rename (as a sync tool does), then removed: each still reported.
        try fileIn(fixture.directory, "b.tmp", [4])
        try FileSystem.rename("\(fixture.directory)/b.tmp", to: "\(fixture.directory)/a.coffer")
        watch.absorbOwnWrites(to: "a.coffer", since: &mark)
        #expect(watch.changed("a.coffer", since: &mark))
        try FileSystem.remove("\(fixture.directory)/a.coffer")
        watch.absorbOwnWrites(to: "a.coffer", since: &mark)
        #expect(watch.changed("a.coffer", since: &mark))
        #expect(!watch.changed("a.coffer", since: &mark))
    }

    /// On NFS a change made on another machine raises no inotify event here.
    @Test func aDirectoryOnANetworkFileSystemReportsEveryFileAsChangedEveryTime() throws {
        let fixture = try StoreFixture()
        try FileSystem.makeDirectories(fixture.directory, permissions: 0o700)
        let nfs = DirectoryWatch(directory: fixture.directory, fileSystem: FileSystemKind(magic: 0x6969)) { _ in true }
        var mark = nfs.mark()
        #expect(nfs.changed("a.coffer", since: &mark))
        #expect(nfs.changed(DirectoryWatch.listing, since: &mark))
        let local = DirectoryWatch(directory: fixture.directory) { _ in true }
        var localMark = local.mark()
        #expect(!local.changed("a.coffer", since: &localMark))
    }

    enum Interference: CaseIterable {
        /// An older copy of the file renamed over it (a sync tool, a restore).
        case replaced
        /// The file removed.
        case removed
    }

    /// Another program replaces or removes the collection file, without its lock, while this
    /// process flushes a write: the next write catches up with what is on the disk now,
    /// instead of appending to the file that is gone.
    @Test(arguments: Interference.allCases)
    func theNextWriteSeesAFileChangedDuringAFlush(_ interference: Interference) throws {
        let fixture = try StoreFixture()
        let armed = Atomic(false)
        let path = fixture.path("work")
        let older = "\(fixture.directory)/older"
        let store = try FileStore(directory: fixture.directory, kdf: .testing, watchChanges: true, warn: { _ in }, beforeFlush: {
            guard armed.exchange(false, ordering: .relaxed) else { return }
            switch interference {
            case .replaced: try? FileSystem.rename(older, to: path)
            case .removed: try? FileSystem.remove(path)
            }
        })
        let keychain = Keychain(provider: store)
        try keychain.createCollection(label: "Work", id: work, password: try password("pw"))
        try keychain.add(NewItem(label: "before", attributes: ["n": "before"], secret: try secret("b")), to: work)
        try FileManager.default.copyItem(atPath: path, toPath: older)

        armed.store(true, ordering: .relaxed)
        try keychain.add(NewItem(label: "during", attributes: ["n": "during"], secret: try secret("d")), to: work)
        // As cofferd's writer commits: to the collection it has open.
        let after = ItemChange.insert(NewItem(label: "after", attributes: ["n": "after"], secret: try secret("a")), onDuplicate: .fail)
        switch interference {
        case .replaced:
            _ = try keychain.commit([after], in: work)
            let reader = try fixture.keychain()
            try reader.unlock(work, password: try password("pw"))
            let labels = try reader.search(Query(collection: work)).map { try reader.metadata(of: $0.reference).label }
            #expect(labels.contains("after"), "the write after the replacement went to the file that was replaced: \(labels)")
        case .removed:
            #expect(throws: CofferError.collectionNotFound(work.rawValue)) { try keychain.commit([after], in: work) }
        }
    }
}
