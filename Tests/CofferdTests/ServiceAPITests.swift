import DBusKit
import Foundation
import Testing

/// org.freedesktop.Secret.Service methods and properties, aliases, locking, GetSecrets.
@Suite(.timeLimit(.minutes(10))) struct ServiceAPITests {
    @Test func collectionsPropertyAndAliases() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        #expect(Set(try c.collections()) == [SS.login, SS.sessionCollection])
        #expect(try c.getAll(SS.service, SS.serviceInterface)["Collections"]?.objectPathArray.map(Set.init)
                == [SS.login, SS.sessionCollection])
        expectDBusError(ErrorName.propertyReadOnly, ErrorName.invalidArgs) {
            try c.set(SS.service, SS.serviceInterface, "Collections", .objectPathArray([]))
        }

        #expect(try c.readAlias("default") == SS.login)
        #expect(try c.readAlias("session") == SS.sessionCollection)
        #expect(try c.readAlias("no_such_alias") == SS.none)
        #expect(try c.readAlias("") == SS.none)

        let session = try c.openDH()
        let work = try c.createWithMasterPassword(label: "Work", password: "work-pw", session: session)
        #expect(work == "/org/freedesktop/secrets/collection/work")
        #expect(Set(try c.collections()) == [SS.login, SS.sessionCollection, work])

        // SetAlias to a collection, read back, then "/" removes it.
        try c.service("SetAlias", [.string("office"), .objectPath(work)])
        #expect(try c.readAlias("office") == work)
        #expect(try c.get("/org/freedesktop/secrets/aliases/office", SS.collectionInterface, "Label").string == "Work")
        try c.service("SetAlias", [.string("office"), .objectPath(SS.none)])
        #expect(try c.readAlias("office") == SS.none)
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) {
            _ = try c.get("/org/freedesktop/secrets/aliases/office", SS.collectionInterface, "Label")
        }

        // Pointing default elsewhere moves where clients store.
        try c.service("SetAlias", [.string("default"), .objectPath(work)])
        #expect(try c.readAlias("default") == work)
        try f.store(label: "to work", ["where": "work"], secret: Array("w".utf8))
        #expect(try c.items(of: work).count == 1)
        #expect(try c.items(of: SS.login).isEmpty)
        try c.service("SetAlias", [.string("default"), .objectPath(SS.login)])
        #expect(try c.readAlias("default") == SS.login)

        // Unknown targets.
        expectDBusError(ErrorName.noSuchObject) {
            try c.service("SetAlias", [.string("office"), .objectPath("/org/freedesktop/secrets/collection/nope")])
        }
        expectDBusError(ErrorName.noSuchObject) {
            try c.service("SetAlias", [.string("office"), .objectPath("/some/where/else")])
        }
        #expect(try c.readAlias("office") == SS.none)
    }

    @Test func aliasPathsWorkAsObjectPaths() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let all = try c.getAll(SS.defaultAlias, SS.collectionInterface)
        #expect(all["Label"]?.string == "Login")
        #expect(all["Locked"]?.bool == false)
        #expect(all["Items"]?.objectPathArray == [])

        // CreateItem on the alias path answers with the real path.
        let item = try c.createItem(in: SS.defaultAlias, label: "via alias", attributes: ["alias": "yes"],
                                    secret: "aliased", session: session)
        #expect(item.parent == SS.login)
        let id = try #require(item.lastElement)
        let aliasItem = try ObjectPath("/org/freedesktop/secrets/aliases/default/\(id)")
        #expect(try c.get(aliasItem, SS.itemInterface, "Label").string == "via alias")
        #expect(try c.getSecret(aliasItem, session: session) == Array("aliased".utf8))
        #expect(try c.getAll(aliasItem, SS.itemInterface)["Attributes"]?.stringDictionary == ["alias": "yes"])
        let viaAlias = try #require(try c.call(SS.defaultAlias, SS.collectionInterface, "SearchItems",
                                               [.stringDictionary(["alias": "yes"])]).first?.objectPathArray)
        #expect(viaAlias == [item])
        #expect(try c.items(of: SS.defaultAlias) == [item])
        // GetSecrets keys the map by the path the caller sent.
        #expect(try c.getSecrets([aliasItem], session: session) == [aliasItem: Array("aliased".utf8)])

        // Set through the alias path changes the real object.
        try c.set(aliasItem, SS.itemInterface, "Label", .string("renamed"))
        #expect(try c.get(item, SS.itemInterface, "Label").string == "renamed")

        // Lock and Unlock name it too.
        let locked = try c.service("Lock", [.objectPathArray([SS.defaultAlias])])
        #expect(locked[0].objectPathArray == [SS.defaultAlias])
        #expect(try c.isLocked(SS.login))
        try c.unlockWithMasterPassword(SS.defaultAlias, password: DaemonFixture.loginPassword, session: session)
        #expect(try c.isLocked(SS.login) == false)

        // Delete through the alias path.
        #expect(try c.call(aliasItem, SS.itemInterface, "Delete").first?.objectPath == SS.none)
        #expect(try c.items(of: SS.login).isEmpty)
        // Unknown aliases and items under them.
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) {
            _ = try c.getAll("/org/freedesktop/secrets/aliases/nothing", SS.collectionInterface)
        }
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) {
            _ = try c.get(aliasItem, SS.itemInterface, "Label")
        }
    }

    @Test func searchItemsSplitsUnlockedAndLocked() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let a = try c.createItem(label: "a", attributes: ["app": "s", "n": "1"], secret: "1", session: session)
        let b = try c.createItem(label: "b", attributes: ["app": "s", "n": "2", "extra": "x"], secret: "2", session: session)
        let work = try c.createWithMasterPassword(label: "Work", password: "pw2", session: session)
        let w = try c.createItem(in: work, label: "w", attributes: ["app": "s", "n": "3"], secret: "3", session: session)

        var found = try c.searchItems(["app": "s"])
        #expect(Set(found.unlocked) == [a, b, w])
        #expect(found.locked.isEmpty)
        #expect(try c.searchItems(["n": "2"]).unlocked == [b])
        #expect(try c.searchItems(["app": "s", "n": "2", "extra": "x"]).unlocked == [b])
        #expect(try c.searchItems(["app": "S"]).unlocked.isEmpty, "matching is case sensitive")
        #expect(try c.searchItems(["app": "s", "n": "4"]) == ([], []))
        #expect(Set(try c.searchItems([:]).unlocked) == [a, b, w], "an empty query matches everything")

        try c.service("Lock", [.objectPathArray([work])])
        found = try c.searchItems(["app": "s"])
        #expect(Set(found.unlocked) == [a, b])
        #expect(found.locked == [w])
        #expect(try c.searchItems(["n": "3"]).locked == [w], "locked items are still found by attribute")

        // Collection.SearchItems is limited to its collection and does not split.
        let inLogin = try #require(try c.call(SS.login, SS.collectionInterface, "SearchItems",
                                              [.stringDictionary(["app": "s"])]).first?.objectPathArray)
        #expect(Set(inLogin) == [a, b])
        let inWork = try #require(try c.call(work, SS.collectionInterface, "SearchItems",
                                             [.stringDictionary(["app": "s"])]).first?.objectPathArray)
        #expect(inWork == [w])
        let none = try #require(try c.call(SS.login, SS.collectionInterface, "SearchItems",
                                           [.stringDictionary(["n": "3"])]).first?.objectPathArray)
        #expect(none.isEmpty)
    }

    @Test func lockUnlockAndLockService() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let item = try c.createItem(label: "l", attributes: ["lock": "1"], secret: "locked secret", session: session)

        // Already unlocked: returned at once, no prompt. Unknown paths are dropped.
        let unlock = try c.service("Unlock", [.objectPathArray([SS.login, item, "/org/freedesktop/secrets/collection/nope"])])
        #expect(unlock[0].objectPathArray == [SS.login, item])
        #expect(unlock[1].objectPath == SS.none)

        let lock = try c.service("Lock", [.objectPathArray([SS.login, "/org/freedesktop/secrets/collection/nope"])])
        #expect(lock[0].objectPathArray == [SS.login])
        #expect(lock[1].objectPath == SS.none)
        #expect(try c.isLocked(SS.login))
        #expect(try c.isLocked(item, interface: SS.itemInterface))
        // Locking again is fine.
        #expect(try c.service("Lock", [.objectPathArray([item])])[0].objectPathArray == [item])

        // Locked: secrets are refused, items still listed, reads answer without data.
        expectDBusError(ErrorName.isLocked) { _ = try c.getSecret(item, session: session) }
        // CreateItem answers with a prompt that would unlock, then store (as oo7); dismissed, it stores nothing.
        let pending = try c.call(SS.login, SS.collectionInterface, "CreateItem",
                                 [.variantDictionary([SS.itemLabel: .string("n")]), try c.encode("n", session: session), .boolean(false)])
        #expect(pending[0].objectPath == SS.none)
        let prompt = try #require(pending[1].objectPath)
        #expect(prompt != SS.none)
        try c.call(prompt, SS.promptInterface, "Dismiss")
        expectDBusError(ErrorName.isLocked) {
            try c.call(item, SS.itemInterface, "SetSecret", [try c.encode("new", session: session)])
        }
        expectDBusError(ErrorName.isLocked) { try c.call(item, SS.itemInterface, "Delete") }
        expectDBusError(ErrorName.isLocked) { try c.set(item, SS.itemInterface, "Label", .string("x")) }
        #expect(try c.items(of: SS.login) == [item])
        #expect(try c.getAll(item, SS.itemInterface)["Locked"]?.bool == true)
        #expect(try c.getSecrets([item], session: session).isEmpty)

        // The wrong password is Denied and keeps it locked; the right one unlocks.
        expectDBusError(ErrorName.denied) {
            try c.unlockWithMasterPassword(SS.login, password: "wrong", session: session)
        }
        #expect(try c.isLocked(SS.login))
        try c.unlockWithMasterPassword(SS.login, password: DaemonFixture.loginPassword, session: session)
        #expect(try c.isLocked(SS.login) == false)
        #expect(try c.getSecret(item, session: session) == Array("locked secret".utf8))
        // Unlocking an unlocked collection with the internal interface succeeds.
        try c.unlockWithMasterPassword(SS.login, password: DaemonFixture.loginPassword, session: session)

        // The session collection has no lock: Lock leaves it and its items alone.
        _ = try c.createItem(in: SS.sessionCollection, label: "temp", attributes: ["lock": "s"], secret: "mem", session: session)
        #expect(try c.service("Lock", [.objectPathArray([SS.sessionCollection])])[0].objectPathArray == [])
        #expect(try c.items(of: SS.sessionCollection).count == 1)
        #expect(try c.isLocked(SS.sessionCollection) == false)

        // LockService locks every collection and empties the session collection.
        let work = try c.createWithMasterPassword(label: "Work", password: "pw", session: session)
        #expect(try c.isLocked(work) == false)
        try c.service("LockService")
        #expect(try c.isLocked(SS.login))
        #expect(try c.isLocked(work))
        #expect(try c.items(of: SS.sessionCollection).isEmpty)
        expectDBusError(ErrorName.noSuchObject) {
            try c.unlockWithMasterPassword("/org/freedesktop/secrets/collection/nope", password: "pw", session: session)
        }
        expectDBusError(ErrorName.noSession) {
            try c.unlockWithMasterPassword(work, password: "pw",
                                           session: ClientSession(path: "/org/freedesktop/secrets/session/s4242",
                                                                  key: nil, sharedSecretHadLeadingZero: false))
        }
        try c.unlockWithMasterPassword(work, password: "pw", session: session)
        #expect(try c.isLocked(work) == false)
        #expect(try c.isLocked(SS.login))
    }

    /// The session collection has no password: it is never locked; LockService empties it.
    @Test func sessionCollectionStaysUnlocked() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let temp = try c.createItem(in: SS.sessionCollection, label: "t", attributes: ["tmp": "1"], secret: "t", session: session)
        #expect(try c.isLocked(SS.sessionCollection) == false)
        #expect(try c.items(of: SS.sessionCollection) == [temp])
        try c.service("LockService")
        #expect(try c.isLocked(SS.sessionCollection) == false)
        #expect(try c.isLocked(SS.login))
        #expect(try c.items(of: SS.sessionCollection).isEmpty, "LockService empties the session collection")
        #expect(try c.searchItems(["tmp": "1"]) == ([], []))
        // Still usable afterwards.
        let again = try c.createItem(in: SS.sessionCollection, label: "t2", attributes: ["tmp": "2"], secret: "t2", session: session)
        #expect(try c.getSecret(again, session: session) == Array("t2".utf8))
        expectDBusError(ErrorName.invalidArgs, ErrorName.noSuchObject, ErrorName.notSupported) {
            try c.changeWithMasterPassword(SS.sessionCollection, from: "", to: "x", session: session)
        }
    }

    @Test func lockedCollectionsCanBeDeletedAndRekeyed() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let a = try c.createWithMasterPassword(label: "A", password: "pa", session: session)
        let item = try c.createItem(in: a, label: "x", attributes: ["k": "a"], secret: "in a", session: session)
        let b = try c.createWithMasterPassword(label: "B", password: "pb", session: session)
        try c.createItem(in: b, label: "y", attributes: ["k": "b"], secret: "in b", session: session)
        try c.service("Lock", [.objectPathArray([a, b])])

        // Re-keying a locked collection needs the right old password and leaves it usable.
        expectDBusError(ErrorName.denied) { try c.changeWithMasterPassword(a, from: "nope", to: "pa2", session: session) }
        try c.changeWithMasterPassword(a, from: "pa", to: "pa2", session: session)
        try c.service("Lock", [.objectPathArray([a])])
        expectDBusError(ErrorName.denied) { try c.unlockWithMasterPassword(a, password: "pa", session: session) }
        try c.unlockWithMasterPassword(a, password: "pa2", session: session)
        #expect(try c.getSecret(item, session: session) == Array("in a".utf8))

        // Deleting a locked collection.
        #expect(try c.isLocked(b))
        #expect(try c.call(b, SS.collectionInterface, "Delete") == [.objectPath(SS.none)])
        #expect(!(try c.collections()).contains(b))
        #expect(try c.searchItems(["k": "b"]) == ([], []))
        #expect(try c.searchItems(["k": "a"]).unlocked == [item])
    }

    @Test func getSecretsSkipsLockedAndUnknownItems() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let one = try c.createItem(label: "1", attributes: ["g": "1"], secret: "first", session: session)
        let two = try c.createItem(label: "2", attributes: ["g": "2"], secret: "second", session: session)
        let work = try c.createWithMasterPassword(label: "Work", password: "pw", session: session)
        let locked = try c.createItem(in: work, label: "3", attributes: ["g": "3"], secret: "third", session: session)
        try c.service("Lock", [.objectPathArray([work])])

        let secrets = try c.getSecrets([one, locked, "/org/freedesktop/secrets/collection/login/99999",
                                        "/org/freedesktop/secrets/collection/nope/1", SS.login, two], session: session)
        #expect(secrets == [one: Array("first".utf8), two: Array("second".utf8)])
        #expect(try c.getSecrets([], session: session).isEmpty)
    }

    @Test func changeWithMasterPassword() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let work = try c.createWithMasterPassword(label: "Changing", password: "old-pw", session: session)
        _ = try c.createItem(in: work, label: "x", attributes: ["c": "1"], secret: "kept", session: session)
        expectDBusError(ErrorName.denied) {
            try c.changeWithMasterPassword(work, from: "not-it", to: "new-pw", session: session)
        }
        try c.changeWithMasterPassword(work, from: "old-pw", to: "new-pw", session: session)
        try c.service("Lock", [.objectPathArray([work])])
        expectDBusError(ErrorName.denied) { try c.unlockWithMasterPassword(work, password: "old-pw", session: session) }
        try c.unlockWithMasterPassword(work, password: "new-pw", session: session)
        let item = try #require(try c.items(of: work).first)
        #expect(try c.getSecret(item, session: session) == Array("kept".utf8))
    }

    @Test func createCollectionAndAliasCornerCases() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // An alias that exists: the collection at once, no prompt.
        let existing = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Default keyring")]),
                                                          .string("default")])
        #expect(existing == [.objectPath(SS.login), .objectPath(SS.none)])
        #expect(try c.collections().count == 2)
        // Alias names are letters, digits and _.
        expectDBusError(ErrorName.invalidArgs) {
            try c.service("CreateCollection", [.variantDictionary([:]), .string("bad-alias")])
        }
        expectDBusError(ErrorName.invalidArgs) { try c.service("SetAlias", [.string("bad alias"), .objectPath(SS.login)]) }
        expectDBusError(ErrorName.invalidArgs) { try c.service("SetAlias", [.string(""), .objectPath(SS.login)]) }
        #expect(try c.readAlias("bad-alias") == SS.none)

        // Removing the default alias falls back to login.
        let work = try c.createWithMasterPassword(label: "Ünïcode Keys", password: "pw", session: try c.openDH())
        #expect(try c.get(work, SS.collectionInterface, "Label") == .string("Ünïcode Keys"))
        #expect(work.parent == SS.collections)
        try c.service("SetAlias", [.string("default"), .objectPath(work)])
        #expect(try c.readAlias("default") == work)
        try c.service("SetAlias", [.string("default"), .objectPath(SS.none)])
        #expect(try c.readAlias("default") == SS.login)
        // Aliases may name the session collection.
        try c.service("SetAlias", [.string("temp"), .objectPath(SS.sessionCollection)])
        #expect(try c.readAlias("temp") == SS.sessionCollection)
        // A collection path through an alias path is accepted as SetAlias target.
        try c.service("SetAlias", [.string("again"), .objectPath(SS.defaultAlias)])
        #expect(try c.readAlias("again") == SS.login)
    }

    /// Many large secrets at once: every one within the limit, read back in one GetSecrets.
    @Test func largeSecretsInBulk() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        var expected: [ObjectPath: [UInt8]] = [:]
        for n in 0..<12 {
            let secret = (0..<(256 * 1024 - n)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            let item = try c.createItem(label: "big \(n)", attributes: ["big": "\(n)"], secret: secret,
                                        contentType: "application/octet-stream", session: session)
            expected[item] = secret
        }
        let all = try c.getSecrets(Array(expected.keys), session: session)
        #expect(all.count == expected.count)
        #expect(all == expected)
        // And after a restart.
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: true)
        let again = try f.client.getSecrets(Array(expected.keys), session: try f.client.openPlain())
        #expect(again == expected)
    }
}
