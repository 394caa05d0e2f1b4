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

    func labels(_ keychain: Keychain) throws -> [String] {
        try keychain.search(Query(collection: work)).map { try keychain.metadata(of: $0.reference).label }.sorted()
    }

    /// A collection file that is a symbolic link into another directory (a sync folder):
    /// writes through it raise no event in the store directory. Two processes (two stores on
    /// the directory, each with its own watch) add items in turn: none is written over.
    @Test func aCollectionFileLinkedFromElsewhereIsLookedAtOnEveryWrite() throws {
        let fixture = try StoreFixture()
        let elsewhere = fixture.directory + "-sync"
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        try FileSystem.makeDirectories(elsewhere, permissions: 0o700)
        let first = try fixture.keychain()
        try first.createCollection(label: "Work", id: work, password: try password("pw"))
        try FileSystem.rename(fixture.path("work"), to: elsewhere + "/work.coffer")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("work"), withDestinationPath: elsewhere + "/work.coffer")
        #expect(!FileCollection.watchSees(fixture.path("work")))
        let second = try fixture.keychain()
        try second.unlock(work, password: try password("pw"))

        for (n, keychain) in [first, second, first, second].enumerated() {
            try keychain.add(NewItem(label: "item \(n)", attributes: ["n": "\(n)"], secret: try secret("s")), to: work)
        }
        let reader = try fixture.keychain()
        try reader.unlock(work, password: try password("pw"))
        #expect(try labels(reader) == ["item 0", "item 1", "item 2", "item 3"])
    }

    /// A hard link is another name the watch does not see either.
    @Test func aFileWithAnotherHardLinkIsNotSeenWhole() throws {
        let fixture = try StoreFixture()
        try FileSystem.makeDirectories(fixture.directory, permissions: 0o700)
        try fileIn(fixture.directory, "a.coffer", [1])
        #expect(FileCollection.watchSees(fixture.directory + "/a.coffer"))
        try FileSystem.link(fixture.directory + "/a.coffer", to: fixture.directory + "/b")
        #expect(!FileCollection.watchSees(fixture.directory + "/a.coffer"))
    }

    /// A directory above the store's is moved away and a copy put in its place (a restore of
    /// a home directory): the watch sees no event, and the writer's records still go into the
    /// file the path names now, not the one moved away.
    @Test func aWriteGoesToTheFileThePathNamesAfterADirectoryAboveIsReplaced() throws {
        let fixture = try StoreFixture()
        let directory = fixture.directory + "/a/b/store"
        let keychain = Keychain(provider: try FileStore(directory: directory, kdf: .testing, warn: { _ in }))
        try keychain.createCollection(label: "Work", id: work, password: try password("pw"))
        try keychain.add(NewItem(label: "before", attributes: ["n": "before"], secret: try secret("b")), to: work)
        try FileSystem.rename(fixture.directory + "/a", to: fixture.directory + "/moved")
        try FileManager.default.copyItem(atPath: fixture.directory + "/moved", toPath: fixture.directory + "/a")

        let after = ItemChange.insert(NewItem(label: "after", attributes: ["n": "after"], secret: try secret("a")), onDuplicate: .fail)
        _ = try keychain.commit([after], in: work)
        let reader = Keychain(provider: try FileStore(directory: directory, kdf: .testing, warn: { _ in }))
        try reader.unlock(work, password: try password("pw"))
        #expect(try labels(reader) == ["after", "before"])
    }
}
