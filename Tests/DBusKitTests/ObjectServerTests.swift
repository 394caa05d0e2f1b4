import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(10))) struct ObjectServerTests {
    /// A harness serving an `ItemTree` of `count` items under /org/coffer as `org.coffer.Test`.
    static func serving(count: Int = 3) throws -> (Harness, ItemTree) {
        let h = try Harness()
        let tree = ItemTree(count: count)
        h.server.objectServer.register(prefix: ItemTree.prefix, tree: tree)
        #expect(try h.server.requestName(testBusName, flags: .doNotQueue) == .primaryOwner)
        h.startServer()
        return (h, tree)
    }

    static func introspect(_ client: DBusConnection, _ path: ObjectPath) throws -> String {
        let reply = try client.call(destination: testBusName, path: path, interface: "org.freedesktop.DBus.Introspectable",
                                    member: "Introspect")
        return try #require(reply.first?.string)
    }

    static func childNodes(_ xml: String) -> [String] {
        xml.components(separatedBy: "<node name=\"").dropFirst().compactMap { $0.components(separatedBy: "\"").first }
    }

    static func call(_ client: DBusConnection, _ path: ObjectPath, _ interface: String?, _ member: String,
                     _ args: [DBusValue] = []) throws -> [DBusValue] {
        try client.call(destination: testBusName, path: path, interface: interface, member: member, arguments: args)
    }

    static let item0: ObjectPath = "/org/coffer/items/item_2d0"
    static let props = "org.freedesktop.DBus.Properties"

    @Test func introspectionListsInterfacesAndChildrenOnEveryLevel() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let root = try ObjectServerTests.introspect(h.client, "/")
        #expect(ObjectServerTests.childNodes(root) == ["org"])
        #expect(root.contains("<interface name=\"org.freedesktop.DBus.Introspectable\">"))
        #expect(ObjectServerTests.childNodes(try ObjectServerTests.introspect(h.client, "/org")) == ["coffer"])

        let prefix = try ObjectServerTests.introspect(h.client, "/org/coffer")
        #expect(prefix.contains("<interface name=\"org.coffer.Root\">"))
        #expect(prefix.contains("<property name=\"Version\" type=\"s\" access=\"read\"/>"))
        #expect(prefix.contains("<interface name=\"org.freedesktop.DBus.Properties\">"))
        #expect(ObjectServerTests.childNodes(prefix) == ["items"])

        let intermediate = try ObjectServerTests.introspect(h.client, "/org/coffer/items")
        #expect(ObjectServerTests.childNodes(intermediate) == ["item_2d0", "item_2d1", "item_2d2"])
        #expect(!intermediate.contains("org.coffer.Item"))

        let item = try ObjectServerTests.introspect(h.client, ObjectServerTests.item0)
        #expect(item.contains("<interface name=\"org.coffer.Item\">"))
        #expect(item.contains("<method name=\"Slow\">"))
        #expect(item.contains("<arg name=\"delay_ms\" type=\"u\" direction=\"in\"/>"))
        #expect(item.contains("<property name=\"Label\" type=\"s\" access=\"readwrite\"/>"))
        #expect(item.contains("<property name=\"Secret\" type=\"s\" access=\"write\"/>"))
        #expect(item.contains("<signal name=\"Changed\">"))
        #expect(ObjectServerTests.childNodes(item).isEmpty)

        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.introspect(h.client, "/org/coffer/items/item_2d9") }
        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.introspect(h.client, "/elsewhere") }
    }

    @Test func gdbusIntrospectWalksTheWholeTree() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let gdbus = try #require(Executables.inPath("gdbus"), "gdbus (libglib2.0-bin) is needed")
        let child = try ChildProcess(gdbus, arguments: ["introspect", "--address", h.bus.address, "--dest", testBusName,
                                                       "--object-path", "/", "--recurse"])
        let result = child.wait(timeout: 30)
        #expect(result.succeeded, "\(result)")
        for node in ["node /org {", "node /org/coffer {", "node /org/coffer/items {", "node /org/coffer/items/item_2d2 {"] {
            #expect(result.stdout.contains(node), "missing '\(node)' in:\n\(result.stdout)")
        }
        #expect(result.stdout.contains("interface org.coffer.Item {"))
        // gdbus reads property values with GetAll.
        #expect(result.stdout.contains("readwrite s Label = 'item-2';"), "\(result.stdout)")
        #expect(result.stdout.contains("readonly s Version = '1.0';"))
    }

    @Test func propertiesGetGetAllSetAndTheirErrors() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let c = h.client
        let item = ObjectServerTests.item0
        let props = ObjectServerTests.props
        #expect(try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item"), .string("Label")]) == [.variant(.string("item-0"))])
        let all = try ObjectServerTests.call(c, item, props, "GetAll", [.string("org.coffer.Item")])
        #expect(all.first?.variantDictionary == ["Label": .string("item-0"), "Attributes": .stringDictionary(["app": "coffer"]),
                                                 "Created": .uint64(1_700_000_000)])
        _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Label"), .variant(.string("renamed"))])
        #expect(try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item"), .string("Label")]) == [.variant(.string("renamed"))])
        _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Attributes"),
                                                                .variant(.stringDictionary(["a": "b"]))])
        #expect(try ObjectServerTests.call(c, item, props, "Get", [.string(""), .string("Attributes")]) == [.variant(.stringDictionary(["a": "b"]))])
        #expect(try ObjectServerTests.call(c, item, props, "GetAll", [.string("org.freedesktop.DBus.Introspectable")]) == [.variantDictionary([:])])

        expectDBusError(DBusError.Name.propertyReadOnly) {
            _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Created"), .variant(.uint64(1))])
        }
        let wrongType = expectDBusError(DBusError.Name.invalidArgs) {
            _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Label"), .variant(.uint32(5))])
        }
        #expect(wrongType?.message.contains("'s'") == true)
        expectDBusError(DBusError.Name.unknownProperty) {
            _ = try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item"), .string("Nope")])
        }
        expectDBusError(DBusError.Name.unknownProperty) {
            _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Nope"), .variant(.string(""))])
        }
        expectDBusError(DBusError.Name.unknownInterface) {
            _ = try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Nope"), .string("Label")])
        }
        expectDBusError(DBusError.Name.unknownInterface) {
            _ = try ObjectServerTests.call(c, item, props, "GetAll", [.string("org.coffer.Nope")])
        }
        expectDBusError(DBusError.Name.invalidArgs) {   // write-only
            _ = try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item"), .string("Secret")])
        }
        // A write answered later, from another thread: its reply, or its error.
        #expect(try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Secret"), .variant(.string("s"))]) == [])
        expectDBusError(DBusError.Name.accessDenied) {
            _ = try ObjectServerTests.call(c, item, props, "Set", [.string("org.coffer.Item"), .string("Secret"), .variant(.string("refuse"))])
        }
        expectDBusError(DBusError.Name.invalidArgs) {   // Get(ss) called with (s)
            _ = try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item")])
        }
        // The rejected writes changed nothing.
        #expect(try ObjectServerTests.call(c, item, props, "Get", [.string("org.coffer.Item"), .string("Label")]) == [.variant(.string("renamed"))])
    }

    @Test func wrongSignaturesAndUnknownTargetsGiveTheRightErrors() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let c = h.client
        let item = ObjectServerTests.item0
        let bad = expectDBusError(DBusError.Name.invalidArgs) {
            _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Slow", [.string("100")])
        }
        #expect(bad?.message.contains("'u'") == true)
        #expect(bad?.message.contains("'s'") == true)
        expectDBusError(DBusError.Name.invalidArgs) { _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Ping", [.int32(1)]) }
        // The server still answers.
        #expect(try ObjectServerTests.call(c, item, "org.coffer.Item", "Ping") == [.string("pong from \(item)")])
        #expect(try ObjectServerTests.call(c, item, nil, "Ping") == [.string("pong from \(item)")])   // no interface given

        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.call(c, "/org/coffer/items/item_2d7", "org.coffer.Item", "Ping") }
        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.call(c, "/nowhere", "org.coffer.Item", "Ping") }
        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.call(c, "/org/coffer/items", "org.coffer.Item", "Ping") }
        expectDBusError(DBusError.Name.unknownMethod) { _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Nope") }
        expectDBusError(DBusError.Name.unknownMethod) { _ = try ObjectServerTests.call(c, item, nil, "Nope") }
        expectDBusError(DBusError.Name.unknownInterface) { _ = try ObjectServerTests.call(c, item, "org.coffer.Nope", "Ping") }
        // Peer is answered by libdbus.
        _ = try ObjectServerTests.call(c, item, "org.freedesktop.DBus.Peer", "Ping")
    }

    @Test func handlerErrorsAndBrokenRepliesBecomeErrorReplies() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let c = h.client
        let item = ObjectServerTests.item0
        let custom = expectDBusError("org.freedesktop.Secret.Error.IsLocked") {
            _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Fail", [.string("org.freedesktop.Secret.Error.IsLocked")])
        }
        #expect(custom?.message == "failed on purpose")
        expectDBusError(DBusError.Name.failed) {
            _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Fail", [.string("not-a-valid-name")])
        }
        let broken = expectDBusError(DBusError.Name.failed) { _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "BadReply") }
        #expect(broken?.message.contains("internal error") == true)
        let forgotten = expectDBusError(DBusError.Name.failed) { _ = try ObjectServerTests.call(c, item, "org.coffer.Item", "Forget") }
        #expect(forgotten?.message.contains("did not answer") == true)
        #expect(try ObjectServerTests.call(c, item, "org.coffer.Item", "CallerUID") == [.uint32(getuid())])
    }

    @Test func deferredReplyFinishedOnAnotherThreadWhileOthersAreServed() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let other = try h.newClient()
        let slowFinished = Mutex<Date?>(nil)
        let slowResult = Mutex<[DBusValue]?>(nil)
        let started = Date()
        let slow = Thread {
            let result = try? ObjectServerTests.call(h.client, ObjectServerTests.item0, "org.coffer.Item", "Slow", [.uint32(1500)])
            slowResult.withLock { $0 = result }
            slowFinished.withLock { $0 = Date() }
        }
        slow.start()
        usleep(100_000)   // let the slow call reach the server
        for _ in 0..<5 {
            #expect(try ObjectServerTests.call(other, "/org/coffer/items/item_2d1", "org.coffer.Item", "Ping").count == 1)
        }
        let fastDone = Date()
        #expect(slowFinished.withLock { $0 } == nil, "the slow call finished before the fast ones")
        #expect(fastDone.timeIntervalSince(started) < 1.2, "fast calls were held up by the deferred one")
        #expect(eventually(timeout: 10) { slowFinished.withLock { $0 } != nil })
        #expect(slowResult.withLock { $0 } == [.boolean(false)])
        #expect((slowFinished.withLock { $0 } ?? started).timeIntervalSince(started) >= 1.4)
    }

    /// A reply made on another thread leaves from that thread: it reaches the caller while the
    /// loop thread is busy (here: held until the answer has arrived, or 10 s).
    @Test func aDeferredReplyLeavesWhileTheLoopThreadIsBusy() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let result = Mutex<[DBusValue]?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let caller = Thread {
            let values = try? ObjectServerTests.call(h.client, ObjectServerTests.item0, "org.coffer.Item", "Slow", [.uint32(1000)])
            result.withLock { $0 = values }
            answered.signal()
        }
        caller.start()
        usleep(200_000)   // let the call reach the server
        let answeredWhileHeld = Mutex<Bool?>(nil)
        h.server.post { answeredWhileHeld.withLock { $0 = answered.wait(timeout: .now() + 10) == .success } }
        #expect(eventually(timeout: 20) { answeredWhileHeld.withLock { $0 } != nil })
        #expect(answeredWhileHeld.withLock { $0 } == true, "the reply waited for the loop thread")
        #expect(result.withLock { $0 } == [.boolean(false)])
    }

    @Test func accessPolicyRejectsCallers() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        let seen = Mutex<[UInt32?]>([])
        h.server.objectServer.accessPolicy = { _, uid in
            seen.withLock { $0.append(uid) }
            return uid == 4_000_000_000   // nobody has this uid
        }
        expectDBusError(DBusError.Name.accessDenied) { _ = try ObjectServerTests.call(h.client, ObjectServerTests.item0, "org.coffer.Item", "Ping") }
        expectDBusError(DBusError.Name.accessDenied) { _ = try ObjectServerTests.introspect(h.client, "/") }
        #expect(seen.withLock { $0 }.first == getuid())
        h.server.objectServer.accessPolicy = { _, uid in uid == getuid() }
        #expect(try ObjectServerTests.call(h.client, ObjectServerTests.item0, "org.coffer.Item", "Ping").count == 1)
    }

    /// Clients that send a burst of calls the moment they connect, before the bus has said who
    /// they are, each get every call answered: the first 64 wait for the bus's answer and are
    /// served, calls past them are LimitsExceeded; the loop goes on serving others.
    @Test func aBurstBeforeTheBusSaysWhoTheCallerIsIsHeldAndBounded() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        h.server.objectServer.accessPolicy = { _, uid in uid == getuid() }
        let clients = try (0..<8).map { _ in try h.newClient() }
        for client in clients { h.startLoop(client) }
        let outcomes = Mutex<[Int: [Int: String]]>([:])
        for (index, client) in clients.enumerated() {
            for call in 0..<100 {
                let message = try DBusMessage.methodCall(destination: testBusName, path: ObjectServerTests.item0,
                                                         interface: "org.coffer.Item", member: "Ping")
                client.callAsync(message) { result in
                    let outcome = switch result {
                    case .success: "ok"
                    case .failure(let error): error.name
                    }
                    outcomes.withLock { $0[index, default: [:]][call] = outcome }
                }
            }
        }
        #expect(eventually(timeout: 20) { outcomes.withLock { $0.values.reduce(0) { $0 + $1.count } } == 800 })
        for (index, answers) in outcomes.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            #expect((0..<64).allSatisfy { answers[$0] == "ok" }, "client \(index): \(answers.sorted { $0.key < $1.key }.prefix(64))")
            #expect(answers.values.allSatisfy { $0 == "ok" || $0 == DBusError.Name.limitsExceeded }, "client \(index): \(Set(answers.values))")
        }
        #expect(try ObjectServerTests.call(try h.newClient(), ObjectServerTests.item0, "org.coffer.Item", "Ping").count == 1)
    }

    /// Every served call reads the policy. Reading it must not change it: a closure stored
    /// unboxed in a generic lock was rewrapped in two thunks per read, so after enough calls
    /// invoking it overflowed the stack.
    @Test func readingTheAccessPolicyLeavesItAsItWas() throws {
        let (h, _) = try ObjectServerTests.serving()
        defer { h.shutdown() }
        h.server.objectServer.accessPolicy = { _, uid in uid == getuid() }
        for _ in 0..<300_000 { _ = h.server.objectServer.accessPolicy }
        let policy = try #require(h.server.objectServer.accessPolicy)
        #expect(policy(":1.1", getuid()))
        #expect(try ObjectServerTests.call(h.client, ObjectServerTests.item0, "org.coffer.Item", "Ping").count == 1)
    }

    @Test func manyDynamicObjectsWithoutRegistration() throws {
        let (h, tree) = try ObjectServerTests.serving(count: 100_000)
        defer { h.shutdown() }
        let last = tree.path(of: 99_999)
        #expect(try ObjectServerTests.call(h.client, last, "org.coffer.Item", "Ping") == [.string("pong from \(last)")])
        #expect(try ObjectServerTests.call(h.client, last, ObjectServerTests.props, "Get",
                                           [.string("org.coffer.Item"), .string("Label")]) == [.variant(.string("item-99999"))])
        expectDBusError(DBusError.Name.unknownObject) { _ = try ObjectServerTests.call(h.client, tree.path(of: 100_000), "org.coffer.Item", "Ping") }
    }
}
