import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Malformed calls, unknown objects, oversized data: clear errors, nothing stored, and the
/// daemon keeps serving.
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    /// The daemon answers and holds exactly the items it held before.
    static func expectStillServing(_ f: DaemonFixture, items expected: Int,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)", sourceLocation: sourceLocation)
        #expect(try f.client.items(of: SecretPath.login).count == expected, sourceLocation: sourceLocation)
        #expect(try f.client.library.readAlias("default") == SecretPath.login, sourceLocation: sourceLocation)
    }

    @Test func wrongSignaturesAreInvalidArgs() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let item = try c.createItem(label: "ok", attributes: ["k": "v"], secret: "s", session: session)
        let secret = try session.encode(SecureBytes("x")).dbusValue

        typealias S = ServiceInterface
        let calls: [(ObjectPath, any DBusMethod.Type, [DBusValue])] = [
            (SecretPath.service, S.SearchItems.self, [.stringArray(["k", "v"])]),
            (SecretPath.service, S.SearchItems.self, []),
            (SecretPath.service, S.OpenSession.self, [.string("plain")]),
            (SecretPath.service, S.OpenSession.self, [.string("plain"), .string("")]),
            (SecretPath.service, S.GetSecrets.self, [.objectPathArray([item])]),
            (SecretPath.service, S.GetSecrets.self, [.stringArray([item.rawValue]), .objectPath(session.path)]),
            (SecretPath.service, S.Unlock.self, [.objectPath(SecretPath.login)]),
            (SecretPath.service, S.Lock.self, [.stringArray([SecretPath.login.rawValue])]),
            (SecretPath.service, S.ReadAlias.self, [.uint32(0)]),
            (SecretPath.service, S.SetAlias.self, [.string("x"), .string(SecretPath.login.rawValue)]),
            (SecretPath.service, S.CreateCollection.self, [.variantDictionary([:])]),
            (SecretPath.login, CollectionInterface.CreateItem.self, [.variantDictionary([ItemProperties.labelKey: .string("x")]), secret]),
            (SecretPath.login, CollectionInterface.CreateItem.self, [secret, .variantDictionary([:]), .boolean(false)]),
            (SecretPath.login, CollectionInterface.CreateItem.self, [.stringDictionary([ItemProperties.labelKey: "x"]), secret, .boolean(false)]),
            (SecretPath.login, CollectionInterface.CreateItem.self,
             [.variantDictionary([:]), .structure([.objectPath(session.path), .bytes([]), .bytes([])]), .boolean(false)]),
            (SecretPath.login, CollectionInterface.SearchItems.self, [.stringArray([])]),
            (item, ItemInterface.GetSecret.self, [.string(session.path.rawValue)]),
            (item, ItemInterface.SetSecret.self, [.bytes([1, 2, 3])]),
            (item, ItemInterface.Delete.self, [.boolean(true)]),
            (SecretPath.service, GnomeKeyringInterface.UnlockWithMasterPassword.self, [.objectPath(SecretPath.login)]),
        ]
        for (path, method, arguments) in calls {
            expectDBusError(DBusError.Name.invalidArgs) { try c.call(path, method.interface, method.name, arguments) }
        }
        try Self.expectStillServing(f, items: 1)
        #expect(try c.secretBytes(of: item, session: session) == Array("s".utf8))
    }

    @Test func badPropertyDictionariesAndSecrets() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let good = try session.encode(SecureBytes("x")).dbusValue
        func create(_ properties: [String: DBusValue], _ secret: DBusValue) throws {
            try c.call(CollectionInterface.CreateItem.self, on: SecretPath.login, arguments: [.variantDictionary(properties), secret, .boolean(false)])
        }
        // Wrong value types in the property dictionary.
        expectDBusError(DBusError.Name.invalidArgs) { try create([ItemProperties.labelKey: .uint32(1)], good) }
        expectDBusError(DBusError.Name.invalidArgs) { try create([ItemProperties.attributesKey: .stringArray(["a"])], good) }
        expectDBusError(DBusError.Name.invalidArgs) { try create([ItemProperties.attributesKey: .string("a=b")], good) }
        // Secrets that cannot be decoded with the session. `good` is one block, "x" and 15
        // bytes of padding (15): an IV with its last byte changed changes only that byte.
        let sealed = try #require(good.structureFields?[2].secureBytes?.unprotected)
        let iv = try #require(good.structureFields?[1].bytes)
        func ivChanging(lastByte: UInt8) -> [UInt8] { iv.enumerated().map { $0 == 15 ? $1 ^ 15 ^ lastByte : $1 } }
        let cases: [DBusValue] = [
            .structure([.objectPath(session.path), .bytes([]), .bytes(sealed), .string("text/plain")]),              // no IV
            .structure([.objectPath(session.path), .bytes(Array(iv.prefix(8))), .bytes(sealed), .string("text/plain")]),  // short IV
            .structure([.objectPath(session.path), .bytes(iv), .bytes(Array(sealed.prefix(15))), .string("text/plain")]), // not blocks
            .structure([.objectPath(session.path), .bytes(iv), .bytes([]), .string("text/plain")]),                  // empty
            .structure([.objectPath(session.path), .bytes(ivChanging(lastByte: 0)), .bytes(sealed), .string("text/plain")]),   // padding 0
            .structure([.objectPath(session.path), .bytes(ivChanging(lastByte: 17)), .bytes(sealed), .string("text/plain")]),  // padding 17
        ]
        for bad in cases {
            expectDBusError(DBusError.Name.invalidArgs) { try create([ItemProperties.labelKey: .string("bad")], bad) }
        }
        let plain = try c.library.openSession(.plain)
        expectDBusError(DBusError.Name.invalidArgs) {
            try create([:], .structure([.objectPath(plain.path), .bytes([1]), .bytes([1]), .string("text/plain")]))
        }
        // Collection labels must be strings.
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.call(GnomeKeyringInterface.CreateWithMasterPassword.self, on: SecretPath.service,
                       arguments: [.variantDictionary([CollectionProperties.labelKey: .uint32(3)]), try session.encode(SecureBytes("pw")).dbusValue])
        }
        try Self.expectStillServing(f, items: 0)
        #expect(Set(try c.library.collections()) == [SecretPath.login, SecretPath.sessionCollection])
    }

    @Test func unknownObjectsMethodsAndInterfaces() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let item = try c.quickItem(attributes: ["u": "1"], secret: "x")
        let unknownPaths: [ObjectPath] = [
            "/org/freedesktop/secrets/collection/nope",
            "/org/freedesktop/secrets/collection/login/424242",
            "/org/freedesktop/secrets/collection/login/abc",
            try ObjectPath("/org/freedesktop/secrets/collection/login/0\(item.lastElement!)"),
            "/org/freedesktop/secrets/collection/login/1/extra",
            "/org/freedesktop/secrets/session/s77",
            "/org/freedesktop/secrets/session/x1",
            "/org/freedesktop/secrets/prompt/p77",
            "/org/freedesktop/secrets/elsewhere",
            "/org/other",
        ]
        for path in unknownPaths {
            expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod, SecretServiceError.Name.noSuchObject) {
                _ = try c.library.properties(of: CollectionInterface.name, on: path)
            }
            expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod, SecretServiceError.Name.noSuchObject) {
                try c.call(ItemInterface.Delete.self, on: path, arguments: [])
            }
        }
        expectDBusError(DBusError.Name.unknownMethod) { try c.call(SecretPath.service, ServiceInterface.name, "Frobnicate") }
        expectDBusError(DBusError.Name.unknownMethod) { try c.call(item, ItemInterface.name, ServiceInterface.GetSecrets.name) }
        expectDBusError(DBusError.Name.unknownMethod) { try c.call(SecretPath.service, nil, "NoSuchThing") }
        expectDBusError(DBusError.Name.unknownInterface, DBusError.Name.unknownMethod) {
            try c.call(CollectionInterface.CreateItem.self, on: SecretPath.service,
                       arguments: [.variantDictionary([:]), try c.library.openSession(.plain).encode(SecureBytes("x")).dbusValue, .boolean(false)])
        }
        expectDBusError(DBusError.Name.unknownInterface, DBusError.Name.unknownMethod) {
            try c.call(ItemInterface.GetSecret.self, on: SecretPath.login, arguments: [.objectPath("/")])
        }
        expectDBusError(DBusError.Name.unknownInterface) { _ = try c.library.properties(of: "org.example.Nothing", on: SecretPath.login) }
        // ChangeLock of an unknown collection.
        expectDBusError(SecretServiceError.Name.noSuchObject) {
            try c.call(ServiceInterface.ChangeLock.self, .init(collection: "/org/freedesktop/secrets/collection/nope"))
        }
        // Calls without an interface find the method by name.
        #expect(try c.call(SecretPath.service, nil, ServiceInterface.ReadAlias.name, [.string("default")]) == [.objectPath(SecretPath.login)])
        // Peer.Ping works on the service.
        try c.call(SecretPath.service, StandardInterface.peer, "Ping")
        try Self.expectStillServing(f, items: 1)
    }

    @Test func oversizedAttributesAndSecretsAreRefused() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let plain = try c.library.openSession(.plain)
        let item = try c.createItem(label: "target", attributes: ["o": "1"], secret: "orig", session: session)

        let bigValue = String(repeating: "v", count: 4097)
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "x", attributes: ["big": bigValue], secret: "s", session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.library.setAttributes(of: item, to: ["big": bigValue])
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: String(repeating: "l", count: 5000), attributes: ["o": "2"], secret: "s", session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "x", attributes: [String(repeating: "n", count: 300): "v"], secret: "s", session: session)
        }
        var many: [String: String] = [:]
        for i in 0..<200 { many["a\(i)"] = "v" }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "x", attributes: many, secret: "s", session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.library.setLabel(ofItem: item, to: String(repeating: "l", count: 5000))
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.library.setLabel(of: SecretPath.login, to: String(repeating: "l", count: 5000))
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "x", attributes: ["": "empty name"], secret: "s", session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            _ = try c.library.createCollection(label: String(repeating: "c", count: 5000), password: SecureBytes("pw"), session: session)
        }
        #expect(try c.library.collection(SecretPath.login).label == "Login")
        #expect(try c.library.item(item).label == "target")
        // Exactly at the limits is fine.
        let edge = try c.createItem(label: "edge", attributes: ["edge": String(repeating: "e", count: 4096)],
                                    secret: "ok", session: session)

        let limit = 256 * 1024
        let seed = testSeed(18)
        var random = SeededGenerator(seed: seed)
        let tooBig = random.bytes(limit + 1)
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "huge", attributes: ["o": "3"], secret: tooBig, session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "huge", attributes: ["o": "3"], secret: tooBig, session: plain)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.library.setSecret(of: item, to: SecureBytes(random.bytes(limit + 4096)), session: session)
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try c.createItem(label: "x", attributes: ["o": "4"], secret: Array("s".utf8),
                             contentType: String(repeating: "t", count: 200), session: session)
        }
        // Nothing was created or changed.
        #expect(Set(try c.items(of: SecretPath.login)) == [item, edge])
        #expect(try c.secretBytes(of: item, session: session) == Array("orig".utf8))
        #expect(try c.library.item(item).attributes == ["o": "1"])

        // The largest allowed secret round-trips, over DH and plain.
        let largest = random.bytes(limit)
        let big = try c.createItem(label: "largest", attributes: ["o": "5"], secret: largest, session: session)
        #expect(try c.secretBytes(of: big, session: session) == largest, "seed \(seed)")
        #expect(try c.secretBytes(of: big, session: plain) == largest, "seed \(seed)")
        try Self.expectStillServing(f, items: 3)
    }

    @Test func aClientDyingMidSessionLeavesTheDaemonServing() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let item = try f.client.quickItem(attributes: ["die": "1"], secret: "survivor")

        // A client that opens sessions and a prompt, starts a call and vanishes.
        let dying = try f.newClient()
        let session = try dying.library.openSession()
        let plain = try dying.library.openSession(.plain)
        _ = try dying.library.lock([SecretPath.login])
        let prompt = try dying.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login])).prompt
        #expect(prompt != SecretPath.none)
        let message = try DBusMessage.methodCall(destination: SecretServiceClient.busName, path: SecretPath.service,
                                                 interface: ServiceInterface.name, member: ServiceInterface.GetSecrets.name,
                                                 arguments: [.objectPathArray([item]), .objectPath(session.path)])
        try dying.connection.send(message)
        #expect(try f.client.close(dying), "cofferd's client never saw the dying one leave")

        for path in [session.path, plain.path, prompt] {
            #expect(throws: DBusError.self, "\(path) outlived its client") { try f.client.introspect(path) }
        }
        expectDBusError(SecretServiceError.Name.noSession) { _ = try f.client.secrets(of: [item], session: session) }
        expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod) {
            try f.client.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        }
        // Unaffected: another client unlocks and reads.
        let fresh = try f.client.library.openSession()
        try f.client.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: fresh)
        #expect(try f.client.secretBytes(of: item, session: fresh) == Array("survivor".utf8))
        #expect(f.daemonIsRunning)
    }

    @Test func secretToolKilledMidWayLeavesTheDaemonServing() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let tool = try #require(Executables.inPath("secret-tool"))
        try f.store(label: "base", ["k": "base"], secret: Array("b".utf8))
        // Lookups that are killed at various moments of their conversation (the delays are
        // the moments, not a wait for anything).
        try f.client.watchConnections()
        for delay in [0, 2_000, 10_000, 30_000, 80_000] as [useconds_t] {
            let child = try ChildProcess(tool, arguments: ["lookup", "k", "base"], environment: f.environment())
            usleep(delay)
            child.send(signal: SIGKILL)
            _ = child.wait(timeout: 10)
        }
        #expect(try f.lookup(["k": "base"]).stdout == "b")
        // Once cofferd has seen them all leave, their sessions are gone (the main client never opened one).
        #expect(try f.client.waitUntilWatchedConnectionsLeft(), "the killed lookups never left the bus")
        let sessions = IntrospectionTests.children(try f.client.introspect(SecretPath.sessions))
        #expect(sessions.isEmpty, "leftover sessions \(sessions)")
        #expect(try f.client.introspect(SecretPath.sessions).contains("<node>"))
        #expect(f.daemonIsRunning)
    }
}
