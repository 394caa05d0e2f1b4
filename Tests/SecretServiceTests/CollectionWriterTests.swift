import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import Dispatch
import Foundation
@testable import SecretService
import Synchronization
import Testing

/// Writes from many clients at once: batched into shared commits, each with its own outcome,
/// in the order they came, and durable when announced.
struct CollectionWriterTests {
    final class Store {
        let directory = NSTemporaryDirectory() + "writer-" + UUID().uuidString
        let keychain: Keychain
        let id = CollectionID("work")!

        init() throws {
            keychain = Keychain(provider: try FileStore(directory: directory, kdf: .testing, warn: { _ in }))
            try keychain.createCollection(label: "Work", id: id, password: SecureBytes(Array("pw".utf8)))
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func item(_ n: Int, attributes: Attributes? = nil) throws -> NewItem {
            NewItem(label: "item \(n)", attributes: attributes ?? ["n": "\(n)"], secret: Secret(bytes: try SecureBytes(Array("s\(n)".utf8))))
        }
    }

    /// Submits `changes` at once and waits for every outcome, in submission order.
    func submitAll(_ writer: CollectionWriter, _ changes: [ItemChange]) -> [Result<ChangedItem, CofferError>] {
        let outcomes = Mutex([Int: Result<ChangedItem, CofferError>]())
        let group = DispatchGroup()
        for (index, change) in changes.enumerated() {
            group.enter()
            writer.submit(change) { outcome in
                outcomes.withLock { $0[index] = outcome }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        return (0..<changes.count).compactMap { index in outcomes.withLock { $0[index] } }
    }

    /// A writer holds a thread only while it has work: the thread ends once idle, and the next
    /// change starts another.
    @Test func theThreadEndsWhenIdleAndTheNextChangeStartsAnother() throws {
        let store = try Store()
        let writer = CollectionWriter(keychain: store.keychain, collection: store.id, idleTimeout: .milliseconds(100))
        #expect(!writer.isRunning)
        for round in 0..<3 {
            let outcomes = submitAll(writer, [.insert(try store.item(round), onDuplicate: .fail)])
            #expect(outcomes.count == 1 && (try? outcomes[0].get())?.isNew == true, "round \(round): \(outcomes)")
            #expect(eventually { !writer.isRunning }, "round \(round): the writer's thread still runs")
        }
        #expect(try store.keychain.collection(store.id).itemIDs(matching: [:], limit: .all).count == 3)
    }

    /// Writers of many collections share a few threads: each collection's changes all get
    /// their outcomes, in order, while no more threads than the limit ever run, and a writer
    /// with a steady stream of work does not keep the others waiting.
    @Test func writersOfManyCollectionsShareABoundedSetOfThreads() throws {
        let threads = WriterThreads(limit: 2)
        let stores = try (0..<8).map { _ in try Store() }
        let writers = stores.map { CollectionWriter(keychain: $0.keychain, collection: $0.id, idleTimeout: .milliseconds(200), threads: threads) }
        let most = Mutex(0)
        let sampling = Mutex(true)
        let sampler = DispatchGroup()
        DispatchQueue.global().async(group: sampler) {
            while sampling.withLock({ $0 }) {
                let now = threads.running
                most.withLock { $0 = max($0, now) }
                usleep(200)
            }
        }
        let outcomes = Mutex([[Int]](repeating: [], count: writers.count))
        let group = DispatchGroup()
        for round in 0..<10 {
            for (index, writer) in writers.enumerated() {
                group.enter()
                writer.submit(.insert(try stores[index].item(round), onDuplicate: .fail)) { outcome in
                    if case .success = outcome { outcomes.withLock { $0[index].append(round) } }
                    group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "some writer never got a thread")
        sampling.withLock { $0 = false }
        sampler.wait()
        #expect(outcomes.withLock { $0 } == Array(repeating: Array(0..<10), count: writers.count))
        #expect(most.withLock { $0 } <= 2, "\(most.withLock { $0 }) writer threads ran at once")
        #expect(eventually { threads.running == 0 && writers.allSatisfy { !$0.isRunning } })
    }

    @Test func manyAtOnceEachGetsItsOwnOutcomeInOrder() throws {
        let store = try Store()
        let writer = CollectionWriter(keychain: store.keychain, collection: store.id)
        let same: Attributes = ["service": "same"]
        var changes: [ItemChange] = try (0..<40).map { .insert(try store.item($0), onDuplicate: .fail) }
        changes += [.insert(try store.item(100, attributes: same), onDuplicate: .replace),
                    .insert(try store.item(101, attributes: same), onDuplicate: .replace),   // replaces the one before
                    .update(999_999, ItemChanges(label: "missing")),                          // fails alone
                    .insert(try store.item(0), onDuplicate: .fail)]                           // a duplicate of item 0
        let outcomes = submitAll(writer, changes)
        #expect(outcomes.count == changes.count)
        let created = outcomes.prefix(40).compactMap { try? $0.get() }
        #expect(created.count == 40 && Set(created.map(\.id)).count == 40 && created.allSatisfy(\.isNew))
        let first = try outcomes[40].get(), second = try outcomes[41].get()
        #expect(first.isNew && !second.isNew && first.id == second.id)
        #expect(throws: CofferError.itemNotFound) { try outcomes[42].get() }
        #expect(throws: CofferError.self) { try outcomes[43].get() }
        // Durable and whole for another reader of the files.
        let other = Keychain(provider: try FileStore(directory: store.directory, kdf: .testing, warn: { _ in }))
        try other.unlock(store.id, password: SecureBytes(Array("pw".utf8)))
        #expect(try other.search(Query(collection: store.id)).count == 41)
        #expect(try other.metadata(of: ItemReference(collection: store.id, item: second.id)).label == "item 101")
    }

    @Test func changesThatInteractAreNeverInOneCommit() throws {
        let a = NewItem(label: "a", attributes: ["k": "1"], secret: Secret(bytes: try SecureBytes([1])))
        let b = NewItem(label: "b", attributes: ["k": "2"], secret: Secret(bytes: try SecureBytes([2])))
        #expect(!CollectionWriter.interact(.insert(a, onDuplicate: .replace), .insert(b, onDuplicate: .replace)))
        #expect(CollectionWriter.interact(.insert(a, onDuplicate: .replace), .insert(a, onDuplicate: .allow)))
        #expect(CollectionWriter.interact(.insert(a, onDuplicate: .replace), .remove(3)))
        #expect(CollectionWriter.interact(.update(3, ItemChanges(label: "x")), .remove(3)))
        #expect(!CollectionWriter.interact(.update(3, ItemChanges(label: "x")), .remove(4)))
    }

    @Test func aLockedCollectionRefusesEveryChange() throws {
        let store = try Store()
        try store.keychain.lock(store.id)
        let writer = CollectionWriter(keychain: store.keychain, collection: store.id)
        let outcomes = submitAll(writer, try (0..<3).map { .insert(try store.item($0), onDuplicate: .allow) })
        #expect(outcomes.count == 3)
        for outcome in outcomes { #expect(throws: CofferError.locked("work")) { try outcome.get() } }
    }
}
