import DBusKit
import Foundation
import Testing

/// org.freedesktop.Secret.Collection and .Item: methods and properties.
@Suite(.timeLimit(.minutes(10))) struct CollectionItemTests {
    @Test func createItemWithAndWithoutReplace() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let first = try c.createItem(label: "one", attributes: ["r": "1"], secret: "v1", session: session)
        #expect(first.parent == SS.login)

        // replace = true with the same attributes: the same item, updated.
        let replaced = try c.createItem(label: "one again", attributes: ["r": "1"], secret: "v2", session: session, replace: true)
        #expect(replaced == first)
        #expect(try c.items(of: SS.login) == [first])
        #expect(try c.getSecret(first, session: session) == Array("v2".utf8))
        #expect(try c.get(first, SS.itemInterface, "Label").string == "one again")

        // replace = false: a second item with its own path.
        let second = try c.createItem(label: "two", attributes: ["r": "1"], secret: "v3", session: session, replace: false)
        #expect(second != first)
        #expect(Set(try c.items(of: SS.login)) == [first, second])
        #expect(try c.getSecret(first, session: session) == Array("v2".utf8))
        #expect(try c.getSecret(second, session: session) == Array("v3".utf8))

        // replace = true with different attributes creates.
        let third = try c.createItem(label: "three", attributes: ["r": "3"], secret: "v4", session: session, replace: true)
        #expect(![first, second].contains(third))
        #expect(try c.items(of: SS.login).count == 3)

        // Missing label and attributes are allowed (empty), and Type becomes xdg:schema.
        let bare = try c.call(SS.login, SS.collectionInterface, "CreateItem",
                              [.variantDictionary([SS.itemType: .string("org.example.Schema")]),
                               try c.encode("bare", session: session), .boolean(false)])
        let barePath = try #require(bare.first?.objectPath)
        let props = try c.getAll(barePath, SS.itemInterface)
        #expect(props["Label"]?.string == "")
        #expect(props["Attributes"]?.stringDictionary == ["xdg:schema": "org.example.Schema"])
        #expect(props["Type"]?.string == "org.example.Schema")

        // In the session collection (memory only) too.
        let inSession = try c.createItem(in: SS.sessionCollection, label: "temp", attributes: ["r": "s"], secret: "mem",
                                         session: session)
        #expect(inSession.parent == SS.sessionCollection)
        #expect(try c.getSecret(inSession, session: session) == Array("mem".utf8))
    }

    @Test func itemProperties() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let start = UInt64(Date().timeIntervalSince1970)
        let item = try c.createItem(label: "Label 1", attributes: ["a": "1", "b": "2"], secret: "s", session: session)
        let all = try c.getAll(item, SS.itemInterface)
        #expect(Set(all.keys) == ["Label", "Attributes", "Locked", "Created", "Modified", "Type"])
        #expect(all["Label"] == .string("Label 1"))
        #expect(all["Attributes"]?.stringDictionary == ["a": "1", "b": "2"])
        #expect(all["Locked"] == .boolean(false))
        #expect(all["Type"] == .string("org.freedesktop.Secret.Generic"))
        let created = try #require(all["Created"]?.uint64)
        let modified = try #require(all["Modified"]?.uint64)
        #expect(created >= start - 2 && created <= UInt64(Date().timeIntervalSince1970) + 2)
        #expect(modified >= created)
        // Interface "" in Get searches all interfaces.
        #expect(try c.call(item, SS.properties, "Get", [.string(""), .string("Label")]).first == .variant(.string("Label 1")))

        try c.set(item, SS.itemInterface, "Label", .string("Label 2 ✓"))
        #expect(try c.get(item, SS.itemInterface, "Label") == .string("Label 2 ✓"))
        // Attributes replace the whole map.
        try c.set(item, SS.itemInterface, "Attributes", .stringDictionary(["c": "3"]))
        #expect(try c.get(item, SS.itemInterface, "Attributes").stringDictionary == ["c": "3"])
        #expect(try c.searchItems(["a": "1"]).unlocked.isEmpty)
        #expect(try c.searchItems(["c": "3"]).unlocked == [item])
        try c.set(item, SS.itemInterface, "Type", .string("org.example.Note"))
        #expect(try c.get(item, SS.itemInterface, "Type") == .string("org.example.Note"))
        #expect(try c.get(item, SS.itemInterface, "Attributes").stringDictionary == ["c": "3", "xdg:schema": "org.example.Note"])

        // Modified moves forward on changes.
        Thread.sleep(forTimeInterval: 1.1)
        try c.call(item, SS.itemInterface, "SetSecret", [try c.encode("s2", session: session)])
        let modified2 = try #require(try c.get(item, SS.itemInterface, "Modified").uint64)
        #expect(modified2 > modified)
        #expect(try c.get(item, SS.itemInterface, "Created").uint64 == created)
        #expect(try c.getSecret(item, session: session) == Array("s2".utf8))

        // Read-only, unknown and mistyped properties.
        for name in ["Locked", "Created", "Modified"] {
            expectDBusError(ErrorName.propertyReadOnly) { try c.set(item, SS.itemInterface, name, .boolean(false)) }
        }
        expectDBusError(ErrorName.unknownProperty) { _ = try c.get(item, SS.itemInterface, "Colour") }
        expectDBusError(ErrorName.unknownProperty) { try c.set(item, SS.itemInterface, "Colour", .string("red")) }
        expectDBusError(ErrorName.invalidArgs) { try c.set(item, SS.itemInterface, "Label", .uint32(5)) }
        expectDBusError(ErrorName.invalidArgs) { try c.set(item, SS.itemInterface, "Attributes", .string("a=b")) }
        expectDBusError(ErrorName.unknownInterface) { _ = try c.get(item, SS.collectionInterface, "Label") }
        #expect(try c.get(item, SS.itemInterface, "Label") == .string("Label 2 ✓"))
    }

    @Test func itemDeleteAndSetSecret() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let keep = try c.createItem(label: "keep", attributes: ["d": "keep"], secret: "k", session: session)
        let item = try c.createItem(label: "del", attributes: ["d": "del"], secret: "d", session: session)

        try c.call(item, SS.itemInterface, "SetSecret", [try c.encode(Array("new value".utf8), contentType: "text/x-note",
                                                                        session: session)])
        let reply = try c.call(item, SS.itemInterface, "GetSecret", [.objectPath(session.path)])
        let got = try c.decode(try #require(reply.first), session: session)
        #expect(got.bytes == Array("new value".utf8))
        #expect(got.contentType == "text/x-note")

        let deleted = try c.call(item, SS.itemInterface, "Delete")
        #expect(deleted == [.objectPath(SS.none)])
        #expect(try c.items(of: SS.login) == [keep])
        #expect(try c.searchItems(["d": "del"]) == ([], []))
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { _ = try c.get(item, SS.itemInterface, "Label") }
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { _ = try c.getSecret(item, session: session) }
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { try c.call(item, SS.itemInterface, "Delete") }
        // A new item does not take over the deleted path's secret.
        let next = try c.createItem(label: "next", attributes: ["d": "next"], secret: "n", session: session)
        #expect(try c.getSecret(next, session: session) == Array("n".utf8))
        #expect(try c.getSecret(keep, session: session) == Array("k".utf8))
    }

    @Test func collectionPropertiesAndDelete() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let start = UInt64(Date().timeIntervalSince1970)
        let keys = try c.createWithMasterPassword(label: "My Keys", password: "pw", session: session)
        #expect(keys == "/org/freedesktop/secrets/collection/my_5fkeys")
        let all = try c.getAll(keys, SS.collectionInterface)
        #expect(Set(all.keys) == ["Items", "Label", "Locked", "Created", "Modified"])
        #expect(all["Label"] == .string("My Keys"))
        #expect(all["Locked"] == .boolean(false))
        #expect(all["Items"] == .objectPathArray([]))
        let created = try #require(all["Created"]?.uint64)
        #expect(created >= start - 2 && created <= UInt64(Date().timeIntervalSince1970) + 2)
        #expect(try #require(all["Modified"]?.uint64) >= created)

        let a = try c.createItem(in: keys, label: "a", attributes: ["x": "1"], secret: "1", session: session)
        let b = try c.createItem(in: keys, label: "b", attributes: ["x": "2"], secret: "2", session: session)
        #expect(Set(try c.items(of: keys)) == [a, b])
        #expect(a.parent == keys)

        try c.set(keys, SS.collectionInterface, "Label", .string("Renamed keys"))
        #expect(try c.get(keys, SS.collectionInterface, "Label") == .string("Renamed keys"))
        #expect(keys == (try c.collections()).first { $0 == keys }, "renaming keeps the path")
        for name in ["Items", "Locked", "Created", "Modified"] {
            expectDBusError(ErrorName.propertyReadOnly) { try c.set(keys, SS.collectionInterface, name, .boolean(true)) }
        }
        expectDBusError(ErrorName.invalidArgs) { try c.set(keys, SS.collectionInterface, "Label", .boolean(true)) }

        // A second collection with the same label gets its own id.
        let again = try c.createWithMasterPassword(label: "My Keys", password: "pw", session: session)
        #expect(again != keys)

        // Delete removes it and its items, and any alias naming it.
        try c.service("SetAlias", [.string("mine"), .objectPath(keys)])
        #expect(try c.call(keys, SS.collectionInterface, "Delete") == [.objectPath(SS.none)])
        #expect(!(try c.collections()).contains(keys))
        #expect(try c.readAlias("mine") == SS.none)
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { _ = try c.getAll(keys, SS.collectionInterface) }
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { _ = try c.get(a, SS.itemInterface, "Label") }
        #expect(try c.getSecrets([a, b], session: session).isEmpty)
        #expect(try c.searchItems(["x": "1"]) == ([], []))
        #expect((try c.collections()).contains(again))
    }
}
