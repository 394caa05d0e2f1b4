import CofferCore
import CofferCrypto
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// The Collection and Item interfaces (`CollectionInterface`, `ItemInterface`): methods and properties.
@Suite(.timeLimit(.minutes(10))) struct CollectionItemTests {
    @Test func createItemWithAndWithoutReplace() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let first = try c.createItem(label: "one", attributes: ["r": "1"], secret: "v1", session: session)
        #expect(first.parent == SecretPath.login)

        // replace = true with the same attributes: the same item, updated.
        let replaced = try c.createItem(label: "one again", attributes: ["r": "1"], secret: "v2", session: session, replace: true)
        #expect(replaced == first)
        #expect(try c.items(of: SecretPath.login) == [first])
        #expect(try c.secretBytes(of: first, session: session) == Array("v2".utf8))
        #expect(try c.library.item(first).label == "one again")

        // replace = false: a second item with its own path.
        let second = try c.createItem(label: "two", attributes: ["r": "1"], secret: "v3", session: session, replace: false)
        #expect(second != first)
        #expect(Set(try c.items(of: SecretPath.login)) == [first, second])
        #expect(try c.secretBytes(of: first, session: session) == Array("v2".utf8))
        #expect(try c.secretBytes(of: second, session: session) == Array("v3".utf8))

        // replace = true with different attributes creates.
        let third = try c.createItem(label: "three", attributes: ["r": "3"], secret: "v4", session: session, replace: true)
        #expect(![first, second].contains(third))
        #expect(try c.items(of: SecretPath.login).count == 3)

        // Missing label and attributes are allowed (empty), and Type becomes xdg:schema.
        let bare = try c.call(CollectionInterface.CreateItem.self, on: SecretPath.login,
                              .init(properties: .init(type: "org.example.Schema"), secret: try session.encode(SecureBytes("bare")),
                                    replace: false))
        let props = try c.library.properties(of: ItemInterface.name, on: bare.item)
        #expect(props[ItemInterface.Property.label]?.string == "")
        #expect(props[ItemInterface.Property.attributes]?.stringDictionary == ["xdg:schema": "org.example.Schema"])
        #expect(props[ItemInterface.Property.type]?.string == "org.example.Schema")

        // In the session collection (memory only) too.
        let inSession = try c.createItem(in: SecretPath.sessionCollection, label: "temp", attributes: ["r": "s"], secret: "mem",
                                         session: session)
        #expect(inSession.parent == SecretPath.sessionCollection)
        #expect(try c.secretBytes(of: inSession, session: session) == Array("mem".utf8))
    }

    @Test func itemProperties() throws {
        let f = try DaemonFixture(daemonEnvironment: DaemonFixture.testClock)
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let start = UInt64(Date().timeIntervalSince1970)
        let item = try c.createItem(label: "Label 1", attributes: ["a": "1", "b": "2"], secret: "s", session: session)
        typealias P = ItemInterface.Property
        let all = try c.library.properties(of: ItemInterface.name, on: item)
        #expect(Set(all.keys) == [P.label, P.attributes, P.locked, P.created, P.modified, P.type])
        #expect(all[P.type] == .string(ItemClass.genericPassword.schema))
        let properties = try c.library.item(item)
        #expect(properties.label == "Label 1" && properties.attributes == ["a": "1", "b": "2"] && !properties.isLocked)
        let (created, modified) = (properties.created, properties.modified)
        #expect(created >= start - 2 && created <= UInt64(Date().timeIntervalSince1970) + 2)
        #expect(modified >= created)
        // Interface "" in Get searches all interfaces.
        #expect(try c.library.property(ItemInterface.Property.label, of: "", on: item) == .string("Label 1"))

        try c.library.setLabel(ofItem: item, to: "Label 2 ✓")
        #expect(try c.library.item(item).label == "Label 2 ✓")
        // Attributes replace the whole map.
        try c.library.setAttributes(of: item, to: ["c": "3"])
        #expect(try c.library.item(item).attributes == ["c": "3"])
        #expect(try c.library.search(["a": "1"]).unlocked.isEmpty)
        #expect(try c.library.search(["c": "3"]).unlocked == [item])
        try c.library.setProperty(ItemInterface.Property.type, of: ItemInterface.name, on: item, to: .string("org.example.Note"))
        #expect(try c.library.property(ItemInterface.Property.type, of: ItemInterface.name, on: item) == .string("org.example.Note"))
        #expect(try c.library.item(item).attributes == ["c": "3", "xdg:schema": "org.example.Note"])

        // Modified moves forward on changes. It counts whole seconds: the test clock moves one on.
        try f.advanceClock(seconds: 1)
        try c.library.setSecret(of: item, to: SecureBytes("s2"), session: session)
        let snapshot = try c.library.item(item)
        #expect(snapshot.modified > modified)
        #expect(snapshot.created == created)
        #expect(try c.secretBytes(of: item, session: session) == Array("s2".utf8))

        // Read-only, unknown and mistyped properties.
        for name in [P.locked, P.created, P.modified] {
            expectDBusError(DBusError.Name.propertyReadOnly) { try c.library.setProperty(name, of: ItemInterface.name, on: item, to: .boolean(false)) }
        }
        expectDBusError(DBusError.Name.unknownProperty) { _ = try c.library.property("Colour", of: ItemInterface.name, on: item) }
        expectDBusError(DBusError.Name.unknownProperty) { try c.library.setProperty("Colour", of: ItemInterface.name, on: item, to: .string("red")) }
        expectDBusError(DBusError.Name.invalidArgs) { try c.library.setProperty(ItemInterface.Property.label, of: ItemInterface.name, on: item, to: .uint32(5)) }
        expectDBusError(DBusError.Name.invalidArgs) { try c.library.setProperty(ItemInterface.Property.attributes, of: ItemInterface.name, on: item, to: .string("a=b")) }
        expectDBusError(DBusError.Name.unknownInterface) { _ = try c.library.property(CollectionInterface.Property.label, of: CollectionInterface.name, on: item) }
        #expect(try c.library.item(item).label == "Label 2 ✓")
    }

    @Test func itemDeleteAndSetSecret() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let keep = try c.createItem(label: "keep", attributes: ["d": "keep"], secret: "k", session: session)
        let item = try c.createItem(label: "del", attributes: ["d": "del"], secret: "d", session: session)

        try c.library.setSecret(of: item, to: SecureBytes(Array("new value".utf8)), contentType: "text/x-note", session: session)
        let got = try c.library.secret(of: item, session: session)
        #expect(got.bytes.unprotected == Array("new value".utf8))
        #expect(got.contentType == "text/x-note")

        #expect(try c.call(ItemInterface.Delete.self, on: item, NoArguments()).prompt == SecretPath.none)
        #expect(try c.items(of: SecretPath.login) == [keep])
        #expect(try c.library.search(["d": "del"]).isEmpty)
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { _ = try c.library.item(item) }
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { _ = try c.secretBytes(of: item, session: session) }
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { try c.call(ItemInterface.Delete.self, on: item, arguments: []) }
        // A new item does not take over the deleted path's secret.
        let next = try c.createItem(label: "next", attributes: ["d": "next"], secret: "n", session: session)
        #expect(try c.secretBytes(of: next, session: session) == Array("n".utf8))
        #expect(try c.secretBytes(of: keep, session: session) == Array("k".utf8))
    }

    @Test func collectionPropertiesAndDelete() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let start = UInt64(Date().timeIntervalSince1970)
        let keys = try c.library.createCollection(label: "My Keys", password: SecureBytes("pw"), session: session)
        #expect(keys == "/org/freedesktop/secrets/collection/My_5fKeys")
        typealias P = CollectionInterface.Property
        let all = try c.library.properties(of: CollectionInterface.name, on: keys)
        #expect(Set(all.keys) == [P.items, P.label, P.locked, P.created, P.modified])
        let collection = try c.library.collection(keys)
        #expect(collection.label == "My Keys" && !collection.isLocked && collection.items.isEmpty)
        #expect(collection.created >= start - 2 && collection.created <= UInt64(Date().timeIntervalSince1970) + 2)
        #expect(collection.modified >= collection.created)

        let a = try c.createItem(in: keys, label: "a", attributes: ["x": "1"], secret: "1", session: session)
        let b = try c.createItem(in: keys, label: "b", attributes: ["x": "2"], secret: "2", session: session)
        #expect(Set(try c.items(of: keys)) == [a, b])
        #expect(a.parent == keys)

        try c.library.setLabel(of: keys, to: "Renamed keys")
        #expect(try c.library.collection(keys).label == "Renamed keys")
        #expect(keys == (try c.library.collections()).first { $0 == keys }, "renaming keeps the path")
        for name in [P.items, P.locked, P.created, P.modified] {
            expectDBusError(DBusError.Name.propertyReadOnly) { try c.library.setProperty(name, of: CollectionInterface.name, on: keys, to: .boolean(true)) }
        }
        expectDBusError(DBusError.Name.invalidArgs) { try c.library.setProperty(P.label, of: CollectionInterface.name, on: keys, to: .boolean(true)) }

        // A second collection with the same label gets its own id.
        let again = try c.library.createCollection(label: "My Keys", password: SecureBytes("pw"), session: session)
        #expect(again != keys)

        // Delete removes it and its items, and any alias naming it.
        try c.library.setAlias("mine", to: keys)
        #expect(try c.call(CollectionInterface.Delete.self, on: keys, NoArguments()).prompt == SecretPath.none)
        #expect(!(try c.library.collections()).contains(keys))
        #expect(try c.library.readAlias("mine") == nil)
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { _ = try c.library.properties(of: CollectionInterface.name, on: keys) }
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { _ = try c.library.item(a) }
        #expect(try c.secrets(of: [a, b], session: session).isEmpty)
        #expect(try c.library.search(["x": "1"]).isEmpty)
        #expect((try c.library.collections()).contains(again))
    }
}
