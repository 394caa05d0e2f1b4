import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Testing

/// Malformed calls, unknown objects, oversized data: clear errors, nothing stored, and the
/// daemon keeps serving.
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    /// The daemon answers and holds exactly the items it held before.
    static func expectStillServing(_ f: DaemonFixture, items expected: Int,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)", sourceLocation: sourceLocation)
        #expect(try f.client.items(of: SS.login).count == expected, sourceLocation: sourceLocation)
        #expect(try f.client.readAlias("default") == SS.login, sourceLocation: sourceLocation)
    }

    @Test func wrongSignaturesAreInvalidArgs() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let item = try c.createItem(label: "ok", attributes: ["k": "v"], secret: "s", session: session)
        let secret = try c.encode("x", session: session)

        let calls: [(ObjectPath, String, String, [DBusValue])] = [
            (SS.service, SS.serviceInterface, "SearchItems", [.stringArray(["k", "v"])]),
            (SS.service, SS.serviceInterface, "SearchItems", []),
            (SS.service, SS.serviceInterface, "OpenSession", [.string("plain")]),
            (SS.service, SS.serviceInterface, "OpenSession", [.string("plain"), .string("")]),
            (SS.service, SS.serviceInterface, "GetSecrets", [.objectPathArray([item])]),
            (SS.service, SS.serviceInterface, "GetSecrets", [.stringArray([item.rawValue]), .objectPath(session.path)]),
            (SS.service, SS.serviceInterface, "Unlock", [.objectPath(SS.login)]),
            (SS.service, SS.serviceInterface, "Lock", [.stringArray([SS.login.rawValue])]),
            (SS.service, SS.serviceInterface, "ReadAlias", [.uint32(0)]),
            (SS.service, SS.serviceInterface, "SetAlias", [.string("x"), .string(SS.login.rawValue)]),
            (SS.service, SS.serviceInterface, "CreateCollection", [.variantDictionary([:])]),
            (SS.login, SS.collectionInterface, "CreateItem", [.variantDictionary([SS.itemLabel: .string("x")]), secret]),
            (SS.login, SS.collectionInterface, "CreateItem", [secret, .variantDictionary([:]), .boolean(false)]),
            (SS.login, SS.collectionInterface, "CreateItem",
             [.stringDictionary([SS.itemLabel: "x"]), secret, .boolean(false)]),
            (SS.login, SS.collectionInterface, "CreateItem",
             [.variantDictionary([:]), .structure([.objectPath(session.path), .bytes([]), .bytes([])]), .boolean(false)]),
            (SS.login, SS.collectionInterface, "SearchItems", [.stringArray([])]),
            (item, SS.itemInterface, "GetSecret", [.string(session.path.rawValue)]),
            (item, SS.itemInterface, "SetSecret", [.bytes([1, 2, 3])]),
            (item, SS.itemInterface, "Delete", [.boolean(true)]),
            (SS.service, SS.gnomeInterface, "UnlockWithMasterPassword", [.objectPath(SS.login)]),
        ]
        for (path, interface, member, arguments) in calls {
            expectDBusError(ErrorName.invalidArgs) { try c.call(path, interface, member, arguments) }
        }
        try Self.expectStillServing(f, items: 1)
        #expect(try c.getSecret(item, session: session) == Array("s".utf8))
    }

    @Test func badPropertyDictionariesAndSecrets() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let good = try c.encode("x", session: session)
        func create(_ properties: [String: DBusValue], _ secret: DBusValue) throws {
            try c.call(SS.login, SS.collectionInterface, "CreateItem", [.variantDictionary(properties), secret, .boolean(false)])
        }
        // Wrong value types in the property dictionary.
        expectDBusError(ErrorName.invalidArgs) { try create([SS.itemLabel: .uint32(1)], good) }
        expectDBusError(ErrorName.invalidArgs) { try create([SS.itemAttributes: .stringArray(["a"])], good) }
        expectDBusError(ErrorName.invalidArgs) { try create([SS.itemAttributes: .string("a=b")], good) }
        // Secrets that cannot be decoded with the session.
        let iv = Random.bytes(16)
        let sealed = try #require(good.structureFields?[2].bytes)
        let cases: [DBusValue] = [
            .structure([.objectPath(session.path), .bytes([]), .bytes(sealed), .string("text/plain")]),              // no IV
            .structure([.objectPath(session.path), .bytes(Array(iv.prefix(8))), .bytes(sealed), .string("text/plain")]),  // short IV
            .structure([.objectPath(session.path), .bytes(iv), .bytes(Array(sealed.prefix(15))), .string("text/plain")]), // not blocks
            .structure([.objectPath(session.path), .bytes(iv), .bytes([]), .string("text/plain")]),                  // empty
            .structure([.objectPath(session.path), .bytes(iv), .bytes(Random.bytes(32)), .string("text/plain")]),    // bad padding (almost surely)
        ]
        for bad in cases {
            expectDBusError(ErrorName.invalidArgs) { try create([SS.itemLabel: .string("bad")], bad) }
        }
        let plain = try c.openPlain()
        expectDBusError(ErrorName.invalidArgs) {
            try create([:], .structure([.objectPath(plain.path), .bytes([1]), .bytes([1]), .string("text/plain")]))
        }
        // Collection labels must be strings.
        expectDBusError(ErrorName.invalidArgs) {
            try c.call(SS.service, SS.gnomeInterface, "CreateWithMasterPassword",
                       [.variantDictionary([SS.collectionLabel: .uint32(3)]), try c.encode("pw", session: session)])
        }
        try Self.expectStillServing(f, items: 0)
        #expect(Set(try c.collections()) == [SS.login, SS.sessionCollection])
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
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                _ = try c.getAll(path, SS.collectionInterface)
            }
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                try c.call(path, SS.itemInterface, "Delete")
            }
        }
        expectDBusError(ErrorName.unknownMethod) { try c.call(SS.service, SS.serviceInterface, "Frobnicate") }
        expectDBusError(ErrorName.unknownMethod) { try c.call(item, SS.itemInterface, "GetSecrets", []) }
        expectDBusError(ErrorName.unknownMethod) { try c.call(SS.service, nil, "NoSuchThing") }
        expectDBusError(ErrorName.unknownInterface, ErrorName.unknownMethod) {
            try c.call(SS.service, SS.collectionInterface, "CreateItem",
                       [.variantDictionary([:]), try c.encode("x", session: try c.openPlain()), .boolean(false)])
        }
        expectDBusError(ErrorName.unknownInterface, ErrorName.unknownMethod) {
            try c.call(SS.login, SS.itemInterface, "GetSecret", [.objectPath("/")])
        }
        expectDBusError(ErrorName.unknownInterface) { _ = try c.getAll(SS.login, "org.example.Nothing") }
        // ChangeLock of an unknown collection.
        expectDBusError(ErrorName.noSuchObject) {
            try c.service("ChangeLock", [.objectPath("/org/freedesktop/secrets/collection/nope")])
        }
        // Calls without an interface find the method by name.
        #expect(try c.call(SS.service, nil, "ReadAlias", [.string("default")]) == [.objectPath(SS.login)])
        // Peer.Ping works on the service.
        try c.call(SS.service, "org.freedesktop.DBus.Peer", "Ping")
        try Self.expectStillServing(f, items: 1)
    }

    @Test func oversizedAttributesAndSecretsAreRefused() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let plain = try c.openPlain()
        let item = try c.createItem(label: "target", attributes: ["o": "1"], secret: "orig", session: session)

        let bigValue = String(repeating: "v", count: 4097)
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "x", attributes: ["big": bigValue], secret: "s", session: session)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.set(item, SS.itemInterface, "Attributes", .stringDictionary(["big": bigValue]))
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: String(repeating: "l", count: 5000), attributes: ["o": "2"], secret: "s", session: session)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "x", attributes: [String(repeating: "n", count: 300): "v"], secret: "s", session: session)
        }
        var many: [String: String] = [:]
        for i in 0..<200 { many["a\(i)"] = "v" }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "x", attributes: many, secret: "s", session: session)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.set(item, SS.itemInterface, "Label", .string(String(repeating: "l", count: 5000)))
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.set(SS.login, SS.collectionInterface, "Label", .string(String(repeating: "l", count: 5000)))
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "x", attributes: ["": "empty name"], secret: "s", session: session)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.call(SS.service, SS.gnomeInterface, "CreateWithMasterPassword",
                       [.variantDictionary([SS.collectionLabel: .string(String(repeating: "c", count: 5000))]),
                        try c.encode("pw", session: session)])
        }
        #expect(try c.get(SS.login, SS.collectionInterface, "Label") == .string("Login"))
        #expect(try c.get(item, SS.itemInterface, "Label") == .string("target"))
        // Exactly at the limits is fine.
        let edge = try c.createItem(label: "edge", attributes: ["edge": String(repeating: "e", count: 4096)],
                                    secret: "ok", session: session)

        let limit = 256 * 1024
        let tooBig = Random.bytes(limit + 1)
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "huge", attributes: ["o": "3"], secret: tooBig, session: session)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "huge", attributes: ["o": "3"], secret: tooBig, session: plain)
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.call(item, SS.itemInterface, "SetSecret", [try c.encode(Random.bytes(limit + 4096), session: session)])
        }
        expectDBusError(ErrorName.invalidArgs) {
            try c.createItem(label: "x", attributes: ["o": "4"], secret: Array("s".utf8),
                             contentType: String(repeating: "t", count: 200), session: session)
        }
        // Nothing was created or changed.
        #expect(Set(try c.items(of: SS.login)) == [item, edge])
        #expect(try c.getSecret(item, session: session) == Array("orig".utf8))
        #expect(try c.get(item, SS.itemInterface, "Attributes").stringDictionary == ["o": "1"])

        // The largest allowed secret round-trips, over DH and plain.
        let largest = Random.bytes(limit)
        let big = try c.createItem(label: "largest", attributes: ["o": "5"], secret: largest, session: session)
        #expect(try c.getSecret(big, session: session) == largest)
        #expect(try c.getSecret(big, session: plain) == largest)
        try Self.expectStillServing(f, items: 3)
    }

    @Test func aClientDyingMidSessionLeavesTheDaemonServing() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let item = try f.client.quickItem(attributes: ["die": "1"], secret: "survivor")

        // A client that opens sessions and a prompt, starts a call and vanishes.
        let dying = try f.newClient()
        let session = try dying.openDH()
        let plain = try dying.openPlain()
        try dying.service("Lock", [.objectPathArray([SS.login])])
        let unlock = try dying.service("Unlock", [.objectPathArray([SS.login])])
        let prompt = try #require(unlock[1].objectPath)
        #expect(prompt != SS.none)
        let message = try DBusMessage.methodCall(destination: DaemonFixture.busName, path: SS.service,
                                                 interface: SS.serviceInterface, member: "GetSecrets",
                                                 arguments: [.objectPathArray([item]), .objectPath(session.path)])
        try dying.connection.send(message)
        dying.close()

        for path in [session.path, plain.path, prompt] {
            let gone = eventually {
                do { _ = try f.client.introspect(path); return false } catch { return true }
            }
            #expect(gone, "\(path) outlived its client")
        }
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecrets([item], session: session) }
        expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod) {
            try f.client.call(prompt, SS.promptInterface, "Prompt", [.string("")])
        }
        // Unaffected: another client unlocks and reads.
        let fresh = try f.client.openDH()
        try f.client.unlockWithMasterPassword(SS.login, password: DaemonFixture.loginPassword, session: fresh)
        #expect(try f.client.getSecret(item, session: fresh) == Array("survivor".utf8))
        #expect(f.daemonIsRunning)
    }

    @Test func secretToolKilledMidWayLeavesTheDaemonServing() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let tool = try #require(Executables.inPath("secret-tool"))
        try f.store(label: "base", ["k": "base"], secret: Array("b".utf8))
        // Lookups that are killed at various moments of their conversation.
        for delay in [0, 2_000, 10_000, 30_000, 80_000] as [useconds_t] {
            let child = try ChildProcess(tool, arguments: ["lookup", "k", "base"], environment: f.environment())
            usleep(delay)
            child.send(signal: SIGKILL)
            _ = child.wait(timeout: 10)
        }
        #expect(try f.lookup(["k": "base"]).stdout == "b")
        // Their sessions are all gone (the main client never opened one).
        var sessions: Set<String> = []
        let cleaned = eventually {
            sessions = IntrospectionTests.children((try? f.client.introspect("/org/freedesktop/secrets/session")) ?? "?")
            return sessions.isEmpty
        }
        #expect(cleaned, "leftover sessions \(sessions)")
        #expect(try f.client.introspect("/org/freedesktop/secrets/session").contains("<node>"))
        #expect(f.daemonIsRunning)
    }
}
