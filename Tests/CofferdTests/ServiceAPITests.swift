import CofferCrypto
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// The Service interface (`ServiceInterface`): methods and properties, aliases, locking, GetSecrets.
@Suite(.timeLimit(.minutes(10))) struct ServiceAPITests {
    @Test func collectionsPropertyAndAliases() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        #expect(Set(try c.library.collections()) == [SecretPath.login, SecretPath.sessionCollection])
        #expect(try c.library.properties(of: ServiceInterface.name, on: SecretPath.service)[ServiceInterface.Property.collections]?.objectPathArray.map(Set.init)
                == [SecretPath.login, SecretPath.sessionCollection])
        expectDBusError(DBusError.Name.propertyReadOnly, DBusError.Name.invalidArgs) {
            try c.library.setProperty(ServiceInterface.Property.collections, of: ServiceInterface.name, on: SecretPath.service, to: .objectPathArray([]))
        }

        #expect(try c.library.readAlias("default") == SecretPath.login)
        #expect(try c.library.readAlias("session") == SecretPath.sessionCollection)
        #expect(try c.library.readAlias("no_such_alias") == nil)
        #expect(try c.library.readAlias("") == nil)

        let session = try c.library.openSession()
        let work = try c.library.createCollection(label: "Work", password: SecureBytes("work-pw"), session: session)
        #expect(work == "/org/freedesktop/secrets/collection/Work")
        #expect(Set(try c.library.collections()) == [SecretPath.login, SecretPath.sessionCollection, work])

        // SetAlias to a collection, read back, then "/" removes it.
        try c.library.setAlias("office", to: work)
        #expect(try c.library.readAlias("office") == work)
        #expect(try c.library.collection("/org/freedesktop/secrets/aliases/office").label == "Work")
        try c.library.setAlias("office", to: SecretPath.none)
        #expect(try c.library.readAlias("office") == nil)
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) {
            _ = try c.library.property(CollectionInterface.Property.label, of: CollectionInterface.name, on: "/org/freedesktop/secrets/aliases/office")
        }

        // Pointing default elsewhere moves where clients store: not over the bus while it names
        // a collection whose items belong to their applications (ask), but with its password.
        let refused = expectDBusError(DBusError.Name.accessDenied) { try c.library.setAlias("default", to: work) }
        #expect(refused?.message.contains("coffer alias set default --collection Work") == true, "\(String(describing: refused))")
        #expect(try c.library.readAlias("default") == SecretPath.login)
        _ = try f.coffer(["alias", "set", "default", "--collection", "Work"])
        #expect(try c.library.readAlias("default") == work)
        try f.store(label: "to work", ["where": "work"], secret: Array("w".utf8))
        #expect(try c.items(of: work).count == 1)
        #expect(try c.items(of: SecretPath.login).isEmpty)
        _ = expectDBusError(DBusError.Name.accessDenied) { try c.library.setAlias("default", to: SecretPath.login) }
        _ = try f.coffer(["alias", "set", "default", "login"], passwordText: "work-pw")
        #expect(try c.library.readAlias("default") == SecretPath.login)
        // Under open, any application may.
        _ = try f.coffer(["policy", "open"])
        try c.library.setAlias("default", to: work)
        #expect(try c.library.readAlias("default") == work)
        _ = try f.coffer(["alias", "remove", "default"], passwordText: "work-pw")

        // Unknown targets.
        expectDBusError(SecretServiceError.Name.noSuchObject) {
            try c.library.setAlias("office", to: "/org/freedesktop/secrets/collection/nope")
        }
        expectDBusError(SecretServiceError.Name.noSuchObject) {
            try c.library.setAlias("office", to: "/some/where/else")
        }
        #expect(try c.library.readAlias("office") == nil)
    }

    @Test func aliasPathsWorkAsObjectPaths() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let login = try c.library.collection(SecretPath.defaultAlias)
        #expect(login.label == "Login" && !login.isLocked && login.items.isEmpty)

        // CreateItem on the alias path answers with the real path.
        let item = try c.createItem(in: SecretPath.defaultAlias, label: "via alias", attributes: ["alias": "yes"],
                                    secret: "aliased", session: session)
        #expect(item.parent == SecretPath.login)
        let id = try #require(item.lastElement)
        let aliasItem = try SecretPath.defaultAlias.appending(element: id)
        #expect(try c.library.item(aliasItem).label == "via alias")
        #expect(try c.secretBytes(of: aliasItem, session: session) == Array("aliased".utf8))
        #expect(try c.library.item(aliasItem).attributes == ["alias": "yes"])
        #expect(try c.library.search(in: SecretPath.defaultAlias, ["alias": "yes"]) == [item])
        #expect(try c.items(of: SecretPath.defaultAlias) == [item])
        // GetSecrets keys the map by the path the caller sent.
        #expect(try c.secrets(of: [aliasItem], session: session) == [aliasItem: Array("aliased".utf8)])

        // Set through the alias path changes the real object.
        try c.library.setLabel(ofItem: aliasItem, to: "renamed")
        #expect(try c.library.item(item).label == "renamed")

        // Lock and Unlock name it too.
        #expect(try c.library.lock([SecretPath.defaultAlias]) == [SecretPath.defaultAlias])
        #expect(try c.isLocked(SecretPath.login))
        try c.library.unlock(SecretPath.defaultAlias, password: SecureBytes(DaemonFixture.loginPassword), session: session)
        #expect(try c.isLocked(SecretPath.login) == false)

        // Delete through the alias path.
        #expect(try c.call(ItemInterface.Delete.self, on: aliasItem, NoArguments()).prompt == SecretPath.none)
        #expect(try c.items(of: SecretPath.login).isEmpty)
        // Unknown aliases and items under them.
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) {
            _ = try c.library.properties(of: CollectionInterface.name, on: "/org/freedesktop/secrets/aliases/nothing")
        }
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) {
            _ = try c.library.property(ItemInterface.Property.label, of: ItemInterface.name, on: aliasItem)
        }
    }

    @Test func searchItemsSplitsUnlockedAndLocked() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let a = try c.createItem(label: "a", attributes: ["app": "s", "n": "1"], secret: "1", session: session)
        let b = try c.createItem(label: "b", attributes: ["app": "s", "n": "2", "extra": "x"], secret: "2", session: session)
        let work = try c.library.createCollection(label: "Work", password: SecureBytes("pw2"), session: session)
        let w = try c.createItem(in: work, label: "w", attributes: ["app": "s", "n": "3"], secret: "3", session: session)

        var found = try c.library.search(["app": "s"])
        #expect(Set(found.unlocked) == [a, b, w])
        #expect(found.locked.isEmpty)
        #expect(try c.library.search(["n": "2"]).unlocked == [b])
        #expect(try c.library.search(["app": "s", "n": "2", "extra": "x"]).unlocked == [b])
        #expect(try c.library.search(["app": "S"]).unlocked.isEmpty, "matching is case sensitive")
        #expect(try c.library.search(["app": "s", "n": "4"]).isEmpty)
        #expect(Set(try c.library.search([:]).unlocked) == [a, b, w], "an empty query matches everything")

        _ = try c.library.lock([work])
        found = try c.library.search(["app": "s"])
        #expect(Set(found.unlocked) == [a, b])
        #expect(found.locked == [w])
        #expect(try c.library.search(["n": "3"]).locked == [w], "locked items are still found by attribute")

        // Collection.SearchItems is limited to its collection and does not split.
        let inLogin = try #require(try c.call(SecretPath.login, CollectionInterface.name, "SearchItems",
                                              [.stringDictionary(["app": "s"])]).first?.objectPathArray)
        #expect(Set(inLogin) == [a, b])
        let inWork = try #require(try c.call(work, CollectionInterface.name, "SearchItems",
                                             [.stringDictionary(["app": "s"])]).first?.objectPathArray)
        #expect(inWork == [w])
        let none = try #require(try c.call(SecretPath.login, CollectionInterface.name, "SearchItems",
                                           [.stringDictionary(["n": "3"])]).first?.objectPathArray)
        #expect(none.isEmpty)
    }

    @Test func lockUnlockAndLockService() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let item = try c.createItem(label: "l", attributes: ["lock": "1"], secret: "locked secret", session: session)

        // Already unlocked: returned at once, no prompt. Unknown paths are dropped.
        let unlock = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login, item, "/org/freedesktop/secrets/collection/nope"]))
        #expect(unlock.unlocked == [SecretPath.login, item])
        #expect(unlock.prompt == SecretPath.none)

        let lock = try c.call(ServiceInterface.Lock.self, .init(objects: [SecretPath.login, "/org/freedesktop/secrets/collection/nope"]))
        #expect(lock.locked == [SecretPath.login])
        #expect(lock.prompt == SecretPath.none)
        #expect(try c.isLocked(SecretPath.login))
        #expect(try c.isLocked(item, interface: ItemInterface.name))
        // Locking again is fine.
        #expect(try c.library.lock([item]) == [item])

        // Locked: secrets are refused, items still listed, reads answer without data.
        expectDBusError(SecretServiceError.Name.isLocked) { _ = try c.secretBytes(of: item, session: session) }
        // CreateItem answers with a prompt that would unlock, then store (as oo7); dismissed, it stores nothing.
        let pending = try c.library.call(CollectionInterface.CreateItem.self, on: SecretPath.login, .init(
            properties: .init(label: "n", attributes: ["lock": "2"]), secret: try session.encode(SecureBytes("n")), replace: false))
        #expect(pending.item == SecretPath.none && pending.prompt != SecretPath.none)
        _ = try c.library.call(PromptInterface.Dismiss.self, on: pending.prompt, NoArguments())
        expectDBusError(SecretServiceError.Name.isLocked) {
            try c.library.setSecret(of: item, to: SecureBytes("new"), session: session)
        }
        expectDBusError(SecretServiceError.Name.isLocked) { try c.library.deleteItem(item) }
        expectDBusError(SecretServiceError.Name.isLocked) { try c.library.setLabel(ofItem: item, to: "x") }
        #expect(try c.items(of: SecretPath.login) == [item])
        #expect(try c.library.item(item).isLocked)
        #expect(try c.secrets(of: [item], session: session).isEmpty)

        // The wrong password is Denied and keeps it locked; the right one unlocks.
        expectDBusError(SecretServiceError.Name.denied) {
            try c.library.unlock(SecretPath.login, password: SecureBytes("wrong"), session: session)
        }
        #expect(try c.isLocked(SecretPath.login))
        try c.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: session)
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(try c.secretBytes(of: item, session: session) == Array("locked secret".utf8))
        // Unlocking an unlocked collection with the internal interface succeeds.
        try c.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: session)

        // The session collection has no lock: Lock leaves it and its items alone.
        _ = try c.createItem(in: SecretPath.sessionCollection, label: "temp", attributes: ["lock": "s"], secret: "mem", session: session)
        #expect(try c.library.lock([SecretPath.sessionCollection]) == [])
        #expect(try c.items(of: SecretPath.sessionCollection).count == 1)
        #expect(try c.isLocked(SecretPath.sessionCollection) == false)

        // LockService locks every collection and empties the session collection.
        let work = try c.library.createCollection(label: "Work", password: SecureBytes("pw"), session: session)
        #expect(try c.isLocked(work) == false)
        try c.call(ServiceInterface.LockService.self, NoArguments())
        #expect(try c.isLocked(SecretPath.login))
        #expect(try c.isLocked(work))
        #expect(try c.items(of: SecretPath.sessionCollection).isEmpty)
        expectDBusError(SecretServiceError.Name.noSuchObject) {
            try c.library.unlock("/org/freedesktop/secrets/collection/nope", password: SecureBytes("pw"), session: session)
        }
        expectDBusError(SecretServiceError.Name.noSession) {
            let password = try SecureBytes("pw")
            try c.call(GnomeKeyringInterface.UnlockWithMasterPassword.self, .init(
                collection: work, master: WireSecret(session: SecretPath.session(4242), parameters: [], value: password,
                                                     contentType: "text/plain")))
        }
        try c.library.unlock(work, password: SecureBytes("pw"), session: session)
        #expect(try c.isLocked(work) == false)
        #expect(try c.isLocked(SecretPath.login))
    }

    /// The session collection has no password: it is never locked; LockService empties it.
    @Test func sessionCollectionStaysUnlocked() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let temp = try c.createItem(in: SecretPath.sessionCollection, label: "t", attributes: ["tmp": "1"], secret: "t", session: session)
        #expect(try c.isLocked(SecretPath.sessionCollection) == false)
        #expect(try c.items(of: SecretPath.sessionCollection) == [temp])
        try c.call(ServiceInterface.LockService.self, NoArguments())
        #expect(try c.isLocked(SecretPath.sessionCollection) == false)
        #expect(try c.isLocked(SecretPath.login))
        #expect(try c.items(of: SecretPath.sessionCollection).isEmpty, "LockService empties the session collection")
        #expect(try c.library.search(["tmp": "1"]).isEmpty)
        // Still usable afterwards.
        let again = try c.createItem(in: SecretPath.sessionCollection, label: "t2", attributes: ["tmp": "2"], secret: "t2", session: session)
        #expect(try c.secretBytes(of: again, session: session) == Array("t2".utf8))
        expectDBusError(DBusError.Name.invalidArgs, SecretServiceError.Name.noSuchObject, DBusError.Name.notSupported) {
            try c.library.changePassword(of: SecretPath.sessionCollection, from: SecureBytes(""), to: SecureBytes("x"), session: session)
        }
    }

    @Test func lockedCollectionsCanBeDeletedAndRekeyed() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let a = try c.library.createCollection(label: "A", password: SecureBytes("pa"), session: session)
        let item = try c.createItem(in: a, label: "x", attributes: ["k": "a"], secret: "in a", session: session)
        let b = try c.library.createCollection(label: "B", password: SecureBytes("pb"), session: session)
        try c.createItem(in: b, label: "y", attributes: ["k": "b"], secret: "in b", session: session)
        _ = try c.library.lock([a, b])

        // Re-keying a locked collection needs the right old password and leaves it usable.
        expectDBusError(SecretServiceError.Name.denied) { try c.library.changePassword(of: a, from: SecureBytes("nope"), to: SecureBytes("pa2"), session: session) }
        try c.library.changePassword(of: a, from: SecureBytes("pa"), to: SecureBytes("pa2"), session: session)
        _ = try c.library.lock([a])
        expectDBusError(SecretServiceError.Name.denied) { try c.library.unlock(a, password: SecureBytes("pa"), session: session) }
        try c.library.unlock(a, password: SecureBytes("pa2"), session: session)
        #expect(try c.secretBytes(of: item, session: session) == Array("in a".utf8))

        // A locked collection is not deleted (whose its items are cannot be told); unlocked, by
        // the creator of its items, it is.
        #expect(try c.isLocked(b))
        expectDBusError(SecretServiceError.Name.isLocked) { _ = try c.call(CollectionInterface.Delete.self, on: b, NoArguments()) }
        try c.library.unlock(b, password: SecureBytes("pb"), session: session)
        #expect(try c.call(CollectionInterface.Delete.self, on: b, NoArguments()).prompt == SecretPath.none)
        #expect(!(try c.library.collections()).contains(b))
        #expect(try c.library.search(["k": "b"]).isEmpty)
        #expect(try c.library.search(["k": "a"]).unlocked == [item])
    }

    @Test func getSecretsSkipsLockedAndUnknownItems() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let one = try c.createItem(label: "1", attributes: ["g": "1"], secret: "first", session: session)
        let two = try c.createItem(label: "2", attributes: ["g": "2"], secret: "second", session: session)
        let work = try c.library.createCollection(label: "Work", password: SecureBytes("pw"), session: session)
        let locked = try c.createItem(in: work, label: "3", attributes: ["g": "3"], secret: "third", session: session)
        _ = try c.library.lock([work])

        let secrets = try c.secrets(of: [one, locked, "/org/freedesktop/secrets/collection/login/99999",
                                        "/org/freedesktop/secrets/collection/nope/1", SecretPath.login, two], session: session)
        #expect(secrets == [one: Array("first".utf8), two: Array("second".utf8)])
        #expect(try c.secrets(of: [], session: session).isEmpty)
    }

    @Test func changeWithMasterPassword() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let work = try c.library.createCollection(label: "Changing", password: SecureBytes("old-pw"), session: session)
        _ = try c.createItem(in: work, label: "x", attributes: ["c": "1"], secret: "kept", session: session)
        expectDBusError(SecretServiceError.Name.denied) {
            try c.library.changePassword(of: work, from: SecureBytes("not-it"), to: SecureBytes("new-pw"), session: session)
        }
        try c.library.changePassword(of: work, from: SecureBytes("old-pw"), to: SecureBytes("new-pw"), session: session)
        _ = try c.library.lock([work])
        expectDBusError(SecretServiceError.Name.denied) { try c.library.unlock(work, password: SecureBytes("old-pw"), session: session) }
        try c.library.unlock(work, password: SecureBytes("new-pw"), session: session)
        let item = try #require(try c.items(of: work).first)
        #expect(try c.secretBytes(of: item, session: session) == Array("kept".utf8))
    }

    @Test func createCollectionAndAliasCornerCases() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // An alias that exists: the collection at once, no prompt.
        let existing = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Default keyring"), alias: "default"))
        #expect(existing.collection == SecretPath.login && existing.prompt == SecretPath.none)
        #expect(try c.library.collections().count == 2)
        // Alias names are letters, digits and _.
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(), alias: "bad-alias"))
        }
        expectDBusError(DBusError.Name.invalidArgs) { try c.library.setAlias("bad alias", to: SecretPath.login) }
        expectDBusError(DBusError.Name.invalidArgs) { try c.library.setAlias("", to: SecretPath.login) }
        #expect(try c.library.readAlias("bad-alias") == nil)

        // Removing the default alias falls back to login (both collections open: any
        // application may point it).
        let work = try c.library.createCollection(label: "Ünïcode Keys", password: SecureBytes("pw"), session: try c.library.openSession())
        #expect(try c.library.collection(work).label == "Ünïcode Keys")
        #expect(work.parent == SecretPath.collections)
        _ = try f.coffer(["policy", "open"])
        _ = try f.coffer(["policy", "open", "--collection", "_n_code_Keys"], passwordText: "pw")   // the id cofferd made of the label
        try c.library.setAlias("default", to: work)
        #expect(try c.library.readAlias("default") == work)
        try c.library.setAlias("default", to: SecretPath.none)
        #expect(try c.library.readAlias("default") == SecretPath.login)
        // Aliases may name the session collection.
        try c.library.setAlias("temp", to: SecretPath.sessionCollection)
        #expect(try c.library.readAlias("temp") == SecretPath.sessionCollection)
        // A collection path through an alias path is accepted as SetAlias target.
        try c.library.setAlias("again", to: SecretPath.defaultAlias)
        #expect(try c.library.readAlias("again") == SecretPath.login)
    }

    /// Many large secrets at once: every one within the limit, read back in one GetSecrets.
    @Test func largeSecretsInBulk() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        var expected: [ObjectPath: [UInt8]] = [:]
        for n in 0..<12 {
            let secret = (0..<(256 * 1024 - n)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            let item = try c.createItem(label: "big \(n)", attributes: ["big": "\(n)"], secret: secret,
                                        contentType: "application/octet-stream", session: session)
            expected[item] = secret
        }
        let all = try c.secrets(of: Array(expected.keys), session: session)
        #expect(all.count == expected.count)
        #expect(all == expected)
        // And after a restart.
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: true)
        let again = try f.client.secrets(of: Array(expected.keys), session: try f.client.library.openSession(.plain))
        #expect(again == expected)
    }
}
