import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

@Suite struct StorePersistenceTests {
    @Test func flowsAgainstRealFilesAndReopen() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let attributes = ["service": "git", "account": "me"]
        let ref = try keychain.add(NewItem(label: "Git", attributes: attributes, secret: secret("one")), to: work)
        #expect(throws: CofferError.duplicateItem) {
            try keychain.add(NewItem(label: "Git", attributes: attributes, secret: secret("x")), to: work)
        }
        #expect(try keychain.add(NewItem(label: "Git", attributes: attributes, secret: secret("two")), to: work,
                                 onDuplicate: .replace) == ref)
        try keychain.update(Query(attributes: ["service": "git"]), with: ItemChanges(label: "Git!"))
        let other = try keychain.add(NewItem(label: "Other", attributes: ["service": "web"], secret: secret("w")), to: work)
        try keychain.delete(Query(attributes: ["service": "web"]))
        #expect(!keychain.exists(other))

        // A second keychain over the same directory: what a restarted process sees.
        let reopened = try fixture.keychain()
        #expect(try reopened.info(work).isLocked)
        #expect(try reopened.info(work).label == "Work")
        let locked = try reopened.search(Query(attributes: attributes, returnAttributes: true, returnSecret: true))
        #expect(locked.map(\.reference) == [ref])
        #expect(locked[0].isLocked && locked[0].metadata == nil && locked[0].secret == nil)
        #expect(throws: CofferError.locked("work")) { try reopened.secret(of: ref) }
        #expect(throws: CofferError.authenticationFailed) { try reopened.unlock(work, password: password("wrong")) }
        try unlockAfterTheWait(reopened, work, password("pw"))
        let found = try reopened.search(Query(attributes: attributes, returnAttributes: true, returnSecret: true))
        #expect(found.first?.metadata?.label == "Git!")
        #expect(text(found.first?.secret) == "two")
        #expect(try reopened.search(Query(collection: work)).count == 1)
    }

    @Test func directoryAndFilesAreOwnerOnly() throws {
        let fixture = try StoreFixture()
        try fixture.keychain().createCollection(label: "Work", id: work, password: password("pw"))
        let manager = FileManager.default
        let dirMode = try manager.attributesOfItem(atPath: fixture.directory)[.posixPermissions] as? Int
        let fileMode = try manager.attributesOfItem(atPath: fixture.path("work"))[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
        #expect(fileMode == 0o600)
    }

    @Test func valuesLabelsAndSecretsAreNotInTheFile() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.add(NewItem(label: "VisibleLabel", attributes: ["service": "ValueMarker"],
                                 secret: secret("SecretMarker")), to: work)
        let contents = String(decoding: try fixture.bytes("work"), as: UTF8.self)
        for marker in ["VisibleLabel", "ValueMarker", "SecretMarker", "service"] {
            #expect(!contents.contains(marker), "\(marker) is readable in the store file")
        }
    }

    @Test func changePasswordKeepsItems() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("old"))
        try keychain.add(NewItem(label: "a", attributes: ["k": "v"], secret: secret("s")), to: work)
        #expect(throws: CofferError.authenticationFailed) {
            try keychain.changePassword(work, from: password("bad"), to: password("new"))
        }
        let (old, new) = (try password("old"), try password("new"))
        try Keychain.waitingOutThrottle { () throws(CofferError) in try keychain.changePassword(work, from: old, to: new) }
        let reopened = try fixture.keychain()
        #expect(throws: CofferError.authenticationFailed) { try reopened.unlock(work, password: password("old")) }
        try unlockAfterTheWait(reopened, work, password("new"))
        #expect(text(try reopened.search(Query(attributes: ["k": "v"], returnSecret: true)).first?.secret) == "s")
    }

    @Test func anEmptyPasswordWorksAndIsStillAPassword() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Blank", id: work, password: try SecureBytes(count: 0))
        try keychain.add(NewItem(label: "a", attributes: ["k": "v"], secret: secret("s")), to: work)
        let reopened = try fixture.keychain()
        #expect(throws: CofferError.authenticationFailed) { try reopened.unlock(work, password: password("x")) }
        try unlockAfterTheWait(reopened, work, try SecureBytes(count: 0))
        #expect(text(try reopened.search(Query(attributes: ["k": "v"], returnSecret: true)).first?.secret) == "s")
    }

    /// A password change re-derives the key with the store's current parameters, so weak
    /// parameters of an old file can be raised.
    @Test func changePasswordUsesTheStoresKeyDerivationParameters() throws {
        let fixture = try StoreFixture()
        try fixture.keychain().createCollection(label: "Work", id: work, password: password("old"))
        #expect(try fixture.store().fileCollection(work).keySlots().first?.kdf == .testing)
        let stronger = Argon2Parameters(iterations: 2, memoryKiB: 128, parallelism: 1)
        let store = try FileStore(directory: fixture.directory, kdf: stronger)
        try Keychain(provider: store).changePassword(work, from: password("old"), to: password("new"))
        #expect(try fixture.store().fileCollection(work).keySlots().first?.kdf == stronger)
        try fixture.keychain().unlock(work, password: password("new"))
    }

    @Test func compactionBoundsTheFileAndKeepsEverything() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        for n in 0..<50 {
            try keychain.add(NewItem(label: "item \(n)", attributes: ["n": String(n)], secret: secret("v0")), to: work)
        }
        let big = String(repeating: "x", count: 2000)
        for round in 1...200 {
            try keychain.update(Query(attributes: ["n": String(round % 50)]), with: ItemChanges(secret: secret("\(big)\(round)")))
        }
        let size = try fixture.bytes("work").count
        #expect(size < 1_000_000, "file is \(size) bytes: superseded records were not reclaimed")
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.search(Query(collection: work)).count == 50)
        #expect(text(try reopened.search(Query(attributes: ["n": "0"], returnSecret: true)).first?.secret) == "\(big)200")
        // Ids are never reused, even after compaction.
        let next = try reopened.add(NewItem(label: "new", attributes: ["n": "new"], secret: secret("s")), to: work)
        #expect(next.item == 51)
    }

    /// An update that leaves the attributes alone keeps the item's attribute terms from its
    /// record (not hashed again); one that changes them, or the type, indexes the new ones. A
    /// fresh store finds each by what it has, and nothing by what it had.
    @Test func updatesKeepOrReplaceTheTermsAnItemIsFoundBy() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let kept = try keychain.add(NewItem(label: "kept", attributes: ["service": "a", "user": "1"], secret: secret("s1")), to: work)
        let changed = try keychain.add(NewItem(label: "changed", attributes: ["service": "b"], secret: secret("s2")), to: work)
        let retyped = try keychain.add(NewItem(label: "retyped", attributes: ["service": "c"], secret: secret("s3")), to: work)
        _ = try keychain.metadata(of: kept)   // one update with the metadata cached, one without
        try keychain.update(kept, with: ItemChanges(label: "kept, relabelled"))
        try keychain.update(kept, with: ItemChanges(secret: secret("s1b")))
        try keychain.update(changed, with: ItemChanges(label: "changed, relabelled"))
        try keychain.update(changed, with: ItemChanges(attributes: ["service": "b2"]))
        try keychain.update(retyped, with: ItemChanges(schema: "org.example.Note"))

        let fresh = try fixture.keychain()
        func found(_ attributes: Attributes) throws -> [ItemReference] { try fresh.search(Query(attributes: attributes, collection: work)).map(\.reference) }
        #expect(try found(["service": "a", "user": "1"]) == [kept], "found while locked, by the index alone")
        #expect(try found(["service": "b"]).isEmpty && found(["service": "b2"]) == [changed])
        #expect(try found([ItemClass.schemaAttribute: "org.example.Note"]) == [retyped])
        try fresh.unlock(work, password: password("pw"))   // every record still authenticates
        #expect(try found(["user": "1"]) == [kept] && found(["service": "c"]) == [retyped])
        #expect(try fresh.metadata(of: kept).label == "kept, relabelled")
        #expect(text(try fresh.search(Query(attributes: ["service": "a"], collection: work, returnSecret: true)).first?.secret) == "s1b")
    }

    @Test func aliasesAndCollections() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        #expect(try keychain.resolveAlias("default") == nil)
        try keychain.createCollection(label: "Login", id: .login, password: password("pw"))
        #expect(try keychain.resolveAlias("default") == .login)
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.setAlias("default", to: work)
        #expect(try fixture.keychain().resolveAlias("default") == work)
        let ref = try keychain.add(NewItem(label: "x", attributes: [:], secret: secret("s")))
        #expect(ref.collection == work)
        try keychain.deleteCollection(work)
        #expect(try keychain.resolveAlias("default") == .login)
        #expect(try keychain.collectionIDs() == [.login, .session])
        #expect(throws: CofferError.collectionExists("login")) {
            try keychain.createCollection(label: "Again", id: .login, password: password("pw"))
        }
    }
}

/// Unlocks once the wait a wrong password given just before imposes is over (see UnlockThrottle).
func unlockAfterTheWait(_ keychain: Keychain, _ id: CollectionID, _ password: SecureBytes) throws {
    try Keychain.waitingOutThrottle { () throws(CofferError) in try keychain.unlock(id, password: password) }
}
