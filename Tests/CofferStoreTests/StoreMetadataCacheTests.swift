import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// A collection keeps the label and attributes it has read up to date with its own changes
/// instead of decrypting them again, and keeps them when it rewrites its file: what it then
/// answers is exactly what a store reading the file afresh finds.
@Suite struct StoreMetadataCacheTests {
    @Test func whatAWriteKeepsIsWhatTheFileSays() throws {
        let fixture = try StoreFixture()
        let writer = try fixture.keychain()
        try writer.createCollection(label: "Work", id: work, password: password("pw"))
        let creator = try #require(Application(kind: .executable, name: "/usr/bin/python3"))
        let first = try writer.add(NewItem(label: "Café ☕ e\u{301}", attributes: ["a": "1", "b": "ü", "xdg:schema": "org.example"],
                                           secret: secret("s"), creator: creator), to: work)
        let second = try writer.add(NewItem(label: "two", attributes: ["n": "2"], secret: secret("t")), to: work)
        // Read (and so cached) before they change.
        for item in [first, second] { _ = try writer.metadata(of: item) }
        try writer.update(second, with: ItemChanges(label: "two again", attributes: ["n": "2", "more": "x"],
                                                    secret: Secret(bytes: try SecureBytes(Array("u".utf8)), contentType: "application/octet-stream")))
        try writer.update(first, with: ItemChanges(schema: "org.example.Other"))
        let third = try writer.add(NewItem(label: "gone", attributes: ["n": "3"], secret: secret("g")), to: work)
        _ = try writer.metadata(of: third)
        try writer.delete(third)

        let reader = try fixture.keychain()
        try reader.unlock(work, password: password("pw"))
        for item in [first, second] {
            #expect(try writer.metadata(of: item) == reader.metadata(of: item))
        }
        // A password change rewrites the file (the live records copied as they are).
        try writer.changePassword(work, from: password("pw"), to: password("new"))
        let afterRewrite = try fixture.keychain()
        try afterRewrite.unlock(work, password: password("new"))
        for item in [first, second] {
            #expect(try writer.metadata(of: item) == afterRewrite.metadata(of: item))
        }
        #expect(throws: CofferError.itemNotFound) { try writer.metadata(of: third) }
        let found = try writer.search(Query(attributes: ["n": "2"], returnAttributes: true))
        #expect(found.map(\.reference) == [second])
        #expect(found.first?.metadata?.attributes == ["n": "2", "more": "x"])
    }

    /// Another process's change, followed in the file by damage that stops the reading: what
    /// was read of that change still replaces the cached metadata, so that once the damage is
    /// gone (cleared in place) the item reads as changed, not as it was cached before.
    @Test func aChangeReadBeforeDamageReplacesTheCachedMetadata() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let item = try keychain.add(NewItem(label: "one", attributes: ["k": "v"], secret: secret("s")), to: work)
        #expect(try keychain.metadata(of: item).label == "one")   // cached

        let before = try fixture.records("work").count
        let other = try fixture.keychain()
        try other.unlock(work, password: password("pw"))
        try other.update(item, with: ItemChanges(label: "two"))
        let after = try fixture.records("work").count
        // The other's batch again, right after it: a record out of order, which stops the
        // reading once that batch is in (written into the reserved space: same file, same size).
        let batch = Array(try fixture.bytes("work")[before..<after])
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: fixture.path("work")))
        try file.seek(toOffset: UInt64(after))
        try file.write(contentsOf: batch)
        try file.synchronize()
        #expect(throws: CofferError.self) { try keychain.metadata(of: item) }

        try file.seek(toOffset: UInt64(after))
        try file.write(contentsOf: [UInt8](repeating: 0, count: batch.count))
        try file.close()
        #expect(try keychain.metadata(of: item).label == "two")
    }

    /// A removal's label is read when asked, after the commit: from the cache for an item
    /// read before, else from a copy of its record, which later changes leave alone.
    @Test func aRemovalReportsTheLabelItsItemHadWhenAskedLater() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let read = try keychain.add(NewItem(label: "read before", attributes: ["n": "1"], secret: secret("s")), to: work)
        let unread = try keychain.add(NewItem(label: "never read", attributes: ["n": "2"], secret: secret("t")), to: work)
        _ = try keychain.metadata(of: read)
        let removed = try keychain.commit([.remove(read.item), .remove(unread.item)], in: work)
        try keychain.add(NewItem(label: "later", attributes: ["n": "1"], secret: secret("u")), to: work)
        #expect(removed.map(\.label) == ["read before", "never read"])
        #expect(removed.allSatisfy { !$0.isNew })
    }
}
