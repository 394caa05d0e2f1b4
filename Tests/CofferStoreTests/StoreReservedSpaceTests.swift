import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// Files grow in zero-filled steps and records go into that reserved space; other readers of
/// the same directory (other processes, here other stores) still see every change at once.
@Suite struct StoreReservedSpaceTests {
    @Test func changesGoIntoReservedSpaceWithoutGrowingTheFile() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.add(NewItem(label: "first", attributes: ["n": "0"], secret: secret("s0")), to: work)
        let size = try fixture.bytes("work").count
        let recordsBefore = try fixture.records("work").count
        #expect(size % 4096 == 0 && size >= recordsBefore + 16 << 10)
        for n in 1...10 {
            try keychain.add(NewItem(label: "item \(n)", attributes: ["n": String(n)], secret: secret("s\(n)")), to: work)
        }
        #expect(try fixture.bytes("work").count == size, "a change inside the reserved space grew the file")
        let replaced = try keychain.insert(NewItem(label: "again", attributes: ["n": "3"], secret: secret("r")),
                                           into: work, onDuplicate: .replace)
        #expect(!replaced.isNew)
        #expect(try fixture.records("work").count > recordsBefore)

        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.search(Query(collection: work)).count == 11)
        #expect(text(try reopened.search(Query(attributes: ["n": "10"], returnSecret: true)).first?.secret) == "s10")
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")
    }

    /// Another store on the same directory stands for another process: what one writes, the
    /// other reads at once, with or without inotify.
    @Test(arguments: [true, false])
    func anotherStoreSeesEveryChangeAtOnce(watchChanges: Bool) throws {
        let fixture = try StoreFixture()
        let writer = try fixture.keychain()
        try writer.createCollection(label: "Work", id: work, password: password("pw"))
        let reader = try fixture.keychain(watchChanges: watchChanges)
        try reader.unlock(work, password: password("pw"))
        #expect(try reader.search(Query(collection: work)).isEmpty)

        let reference = try writer.add(NewItem(label: "a", attributes: ["k": "v"], secret: secret("one")), to: work)
        #expect(text(try reader.search(Query(attributes: ["k": "v"], returnSecret: true)).first?.secret) == "one")
        try writer.update(reference, with: ItemChanges(secret: secret("two")))
        #expect(text(try reader.search(Query(attributes: ["k": "v"], returnSecret: true)).first?.secret) == "two")
        try writer.delete(reference)
        #expect(try reader.search(Query(attributes: ["k": "v"])).isEmpty)

        try writer.createCollection(label: "Login", id: .login, password: password("pw"))
        #expect(try reader.collectionIDs().contains(.login))
        #expect(try reader.resolveAlias("default") == .login)
        try writer.setAlias("default", to: work)
        #expect(try reader.resolveAlias("default") == work)
        try writer.deleteCollection(.login)
        #expect(try !reader.collectionIDs().contains(.login))

        // And the other way round, after the reader wrote into the same reserved space.
        try reader.add(NewItem(label: "b", attributes: ["k": "w"], secret: secret("three")), to: work)
        try writer.unlock(work, password: password("pw"))
        #expect(text(try writer.search(Query(attributes: ["k": "w"], returnSecret: true)).first?.secret) == "three")
    }

    /// The store's directory removed and made anew (a restore from a backup): the old watch
    /// hears nothing more, so the store must stop trusting it.
    @Test func aStoreWhoseDirectoryWasReplacedStillSeesChanges() throws {
        let fixture = try StoreFixture()
        let first = try fixture.keychain()
        try first.createCollection(label: "Work", id: work, password: password("pw"))
        #expect(try first.collectionIDs().contains(work))
        try FileManager.default.removeItem(atPath: fixture.directory)
        let second = try fixture.keychain()
        try second.createCollection(label: "Login", id: .login, password: password("pw"))
        #expect(try first.collectionIDs().filter { $0 != .session } == [.login])
        let other = CollectionID("other")!
        try second.createCollection(label: "Other", id: other, password: password("pw"))
        #expect(try first.collectionIDs().contains(other), "the watch of the removed directory went quiet")
        try second.add(NewItem(label: "x", attributes: ["k": "v"], secret: secret("s")), to: other)
        try first.unlock(other, password: password("pw"))
        #expect(try first.search(Query(attributes: ["k": "v"])).count == 1)
    }

    /// A write cut short inside the reserved space leaves part of a record followed by zeros:
    /// it is an unfinished write, dropped with a warning and cleared by the next change.
    @Test func tornWriteInReservedSpaceIsDroppedAndCleared() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        for n in 0..<3 {
            try keychain.add(NewItem(label: "w\(n)", attributes: ["n": String(n)], secret: secret("s\(n)")), to: work)
        }
        var bytes = try fixture.bytes("work")
        let records = try fixture.records("work")
        let lastRecord = records[try #require(recordStart(endingAt: records.count, in: records))...]
        bytes.replaceSubrange(records.count..<records.count + 60, with: lastRecord.prefix(60))
        try fixture.write(bytes, to: "work")

        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.search(Query(collection: work)).count == 3)
        // The bytes up to the last non-zero one count (a record's 60th byte may itself be zero).
        let copied = lastRecord.prefix(60)
        let counted = copied.lastIndex { $0 != 0 }.map { $0 - copied.startIndex + 1 } ?? 0
        #expect(fixture.warnings.all.contains { $0.contains("ignoring \(counted) bytes") }, "\(fixture.warnings.all)")
        try reopened.add(NewItem(label: "after", attributes: ["n": "after"], secret: secret("a")), to: work)

        let again = try fixture.keychain()
        try again.unlock(work, password: password("pw"))
        #expect(try again.search(Query(collection: work)).count == 4)
        #expect(text(try again.search(Query(attributes: ["n": "after"], returnSecret: true)).first?.secret) == "a")
    }

    /// Zeros are not a place to hide damage: a committed record after a run of zeros means the
    /// zeros replaced committed data, and the file is reported, not cut.
    @Test func committedRecordAfterZerosIsCorrupt() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let last = try keychain.add(NewItem(label: "x", attributes: ["n": "x"], secret: secret("s")), to: work)
        let withLast = try fixture.records("work")
        try keychain.delete(last)
        let records = try fixture.records("work")
        let removal = Array(records[withLast.count...])
        // Zero the removal record and put a copy of it after 64 zero bytes.
        let image = Array(withLast) + [UInt8](repeating: 0, count: removal.count + 64) + removal
        try fixture.write(image, to: "work")
        #expect {
            try fixture.keychain().info(work)
        } throws: { reportsDamage(to: "work.coffer", $0) }
        #expect(try fixture.bytes("work") == image, "the damaged file was modified")
    }
}
