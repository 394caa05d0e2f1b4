import CofferCore
import CofferCrypto
@testable import CofferStore
import Dispatch
import Foundation
import Synchronization
import Testing

/// While a writer flushes its records to the disk, this process's readers go on with the
/// collection as it was, and other writers wait their turn; the change shows once durable.
@Suite(.timeLimit(.minutes(10))) struct FlushTests {
    /// A flush held at its start until the test lets it go.
    final class HeldFlush: Sendable {
        let armed = Atomic(false)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        func beforeFlush() {
            guard armed.exchange(false, ordering: .relaxed) else { return }
            started.signal()
            release.wait()
        }
    }

    /// Runs `body` on a thread of its own; the semaphore is signalled when it returns.
    func inBackground(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done
    }

    @Test func readersGoOnDuringAFlushAndSeeTheChangeOnceItIsDurable() throws {
        let fixture = try StoreFixture()
        let held = HeldFlush()
        let store = try FileStore(directory: fixture.directory, kdf: .testing, watchChanges: true, warn: { _ in },
                                  beforeFlush: { held.beforeFlush() })
        let keychain = Keychain(provider: store)
        let id = try keychain.createCollection(label: "Flush", password: try password("pw"))
        let first = try keychain.add(NewItem(label: "first", attributes: ["n": "1"], secret: try secret("one")), to: id)

        held.armed.store(true, ordering: .relaxed)
        let item = NewItem(label: "second", attributes: ["n": "2"], secret: try secret("two"))
        let outcome = Mutex<Result<ItemReference, CofferError>?>(nil)
        let written = inBackground {
            let result = Result { () throws(CofferError) in try keychain.add(item, to: id) }
            outcome.withLock { $0 = result }
        }
        #expect(held.started.wait(timeout: .now() + 30) == .success)

        // Reads of this process, on another thread, answer while the flush is held.
        let reads = Mutex<(found: [String], secretRead: Bool, count: Int)?>(nil)
        let readersDone = inBackground {
            let found = (try? keychain.search(Query(collection: id)).compactMap { try? keychain.metadata(of: $0.reference).label }) ?? []
            let one = (try? keychain.secret(of: first))?.bytes == (try? secret("one"))?.bytes
            let count = (try? keychain.info(id).itemCount) ?? -1
            reads.withLock { $0 = (found.sorted(), one, count) }
        }
        #expect(readersDone.wait(timeout: .now() + 10) == .success, "a read waited behind the flush")
        let seen = try #require(reads.withLock { $0 })
        #expect(seen.found == ["first"] && seen.count == 1, "the change showed before it was durable: \(seen)")
        #expect(seen.secretRead)

        // Another writer of this process waits for the first.
        let secondWriter = inBackground {
            _ = try? keychain.add(NewItem(label: "third", attributes: ["n": "3"], secret: try secret("three")), to: id)
        }
        #expect(secondWriter.wait(timeout: .now() + 0.3) == .timedOut, "a second writer went past a flush in progress")
        #expect(outcome.withLock { $0 } == nil)

        held.release.signal()
        #expect(written.wait(timeout: .now() + 30) == .success)
        #expect(secondWriter.wait(timeout: .now() + 30) == .success)
        let second = try #require(try outcome.withLock { $0 }?.get())
        #expect(try keychain.metadata(of: second).label == "second")
        #expect(try keychain.info(id).itemCount == 3)

        // And all of it is on the disk, for another process.
        let reopened = try fixture.keychain()
        try reopened.unlock(id, password: try password("pw"))
        #expect(try reopened.search(Query(collection: id)).map { try reopened.metadata(of: $0.reference).label }.sorted()
                == ["first", "second", "third"])
    }

    /// Holds on to a buffer without keeping it alive.
    final class Watched: Sendable {
        nonisolated(unsafe) weak var buffer: SecureBytes?
    }

    /// A change giving `item` a secret of `bytes`, and a watch on that secret's buffer (the
    /// change alone holds it).
    static func changeWatchingItsSecret(_ item: ItemID, _ bytes: [UInt8]) throws -> ([ItemChange], Watched) {
        let buffer = try SecureBytes(bytes)
        let watched = Watched()
        watched.buffer = buffer
        return ([.update(item, ItemChanges(secret: Secret(bytes: buffer)))], watched)
    }

    /// A writer hears of its commit as soon as it is durable and readable: the secrets it
    /// carried are gone by then (released once sealed, before the flush), and a compaction the
    /// commit brings on comes only after, so that whoever waits for the write waits for none.
    @Test func aCommitIsAcknowledgedOnceDurableBeforeTheCompactionItBringsOn() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let id = try keychain.createCollection(label: "Acknowledged", password: try password("pw"))
        let first = [UInt8](repeating: 0x61, count: 100 << 10), last = [UInt8](repeating: 0x62, count: 100 << 10)
        let item = try keychain.add(NewItem(label: "big", attributes: ["n": "1"], secret: Secret(bytes: try SecureBytes(first))), to: id)
        for _ in 0..<2 { try keychain.update(item, with: ItemChanges(secret: Secret(bytes: try SecureBytes(first)))) }
        // 200 KiB of superseded records: one more change takes them past 256 KiB, and compacts.
        let path = fixture.path(id.rawValue)
        let before = try #require(try PosixFile.identity(of: path)).identity

        var (changes, watched) = try Self.changeWatchingItsSecret(item.item, last)
        var heard: (secretReleased: Bool, readBack: Bool, compacted: Bool)?
        try keychain.commit(&changes, in: id) { changed in
            #expect(changed.map(\.id) == [item.item])
            let readBack = (try? keychain.secret(of: item))?.bytes == (try? SecureBytes(last))
            heard = (watched.buffer == nil, readBack, (try? PosixFile.identity(of: path))??.identity != before)
        }
        let acknowledged = try #require(heard, "the commit was not acknowledged")
        #expect(acknowledged.secretReleased, "the change's secret outlived its sealing")
        #expect(acknowledged.readBack, "the acknowledged change could not be read back")
        #expect(!acknowledged.compacted, "the acknowledgement waited for the compaction")
        #expect(try PosixFile.identity(of: path)?.identity != before, "the commit did not compact the file")
        #expect(changes.isEmpty)

        // All of it durable, for another process.
        let reopened = try fixture.keychain()
        try reopened.unlock(id, password: try password("pw"))
        #expect(try reopened.secret(of: item).bytes == (try SecureBytes(last)))
    }

    /// A change refused before anything is written leaves the changes whole, for the caller to
    /// try them one by one; it is not acknowledged.
    @Test func aRefusedCommitLeavesItsChangesWholeAndUnacknowledged() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let id = try keychain.createCollection(label: "Refused", password: try password("pw"))
        let item = try keychain.add(NewItem(label: "a", attributes: ["n": "1"], secret: try secret("s")), to: id)
        var changes: [ItemChange] = [.update(item.item, ItemChanges(label: "b")), .remove(999)]
        var acknowledged = false
        #expect(throws: CofferError.itemNotFound) { try keychain.commit(&changes, in: id) { _ in acknowledged = true } }
        #expect(!acknowledged && changes.count == 2)
        #expect(try keychain.metadata(of: item).label == "a")
    }
}

/// A change of an item's type sets `xdg:schema` on the attributes the item has when it is
/// committed: a change of attributes committed before it is kept, in memory and on file.
struct SchemaChangeTests {
    @Test(arguments: ["session", "file"])
    func aTypeChangeKeepsTheAttributesOfTheMomentItIsCommitted(backend: String) throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let id = backend == "session" ? CollectionID.session : try keychain.createCollection(label: "Types", password: try password("pw"))
        let item = try keychain.add(NewItem(label: "item", attributes: ["a": "1"], secret: try secret("s")), to: id)
        try keychain.update(item, with: ItemChanges(attributes: ["b": "2"]))
        try keychain.update(item, with: ItemChanges(schema: "org.example.Type"))
        #expect(try keychain.metadata(of: item).attributes == ["b": "2", ItemClass.schemaAttribute: "org.example.Type"])
        #expect(try keychain.search(Query(attributes: [ItemClass.schemaAttribute: "org.example.Type"], collection: id)).map(\.reference) == [item])
        #expect(throws: CofferError.self) { try keychain.update(item, with: ItemChanges(schema: String(repeating: "x", count: 1 << 20))) }
    }
}
