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
