import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(10))) struct ConnectionTests {
    @Test func connectsAndHasAUniqueName() throws {
        let h = try Harness()
        defer { h.shutdown() }
        #expect(h.server.uniqueName.hasPrefix(":"))
        #expect(h.server.uniqueName != h.client.uniqueName)
        #expect(h.client.isConnected)
        #expect(throws: DBusError.self) { try DBusConnection(address: "unix:path=/nonexistent/socket") }
        #expect(throws: DBusError.self) { try DBusConnection(address: "garbage") }
    }

    @Test func requestNameWhenTakenWithAndWithoutReplacement() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let a = h.server, b = h.client
        let lost = Mutex<[String]>([])
        a.onNameLost { name in lost.withLock { $0.append(name) } }
        h.startServer()

        #expect(try a.requestName(testBusName, flags: .doNotQueue) == .primaryOwner)
        #expect(try a.requestName(testBusName, flags: .doNotQueue) == .alreadyOwner)
        #expect(try b.requestName(testBusName, flags: .doNotQueue) == .exists)
        #expect(try b.requestName(testBusName, flags: [.replaceExisting, .doNotQueue]) == .exists)   // a did not allow it
        #expect(try a.nameOwner(testBusName) == a.uniqueName)
        #expect(lost.withLock { $0 }.isEmpty)

        #expect(try a.requestName(testBusName, flags: .allowReplacement) == .alreadyOwner)   // now it does
        #expect(try b.requestName(testBusName, flags: [.replaceExisting, .doNotQueue]) == .primaryOwner)
        #expect(try a.nameOwner(testBusName) == b.uniqueName)
        #expect(eventually { lost.withLock { $0 } == [testBusName] })

        // a asked without doNotQueue, so it waits in the queue and gets the name back.
        #expect(try b.releaseName(testBusName) == .released)
        #expect(try a.nameOwner(testBusName) == a.uniqueName)
        #expect(try b.releaseName(testBusName) == .notOwner)
        #expect(try b.releaseName("org.coffer.Unused") == .nonExistent)
        #expect(try b.requestName("org.coffer.Other") == .primaryOwner)
        #expect(try h.newClient().requestName("org.coffer.Other") == .inQueue)
        #expect(throws: DBusError.self) { try b.requestName("not a bus name") }
    }

    /// The form for the loop thread: asked from there, answered there, never blocking it.
    @Test func nameOwnerWithoutWaitingAnswersOnTheLoopThread() throws {
        let h = try Harness()
        defer { h.shutdown() }
        #expect(try h.client.requestName(testBusName, flags: .doNotQueue) == .primaryOwner)
        h.startServer()
        let answers = Mutex<[Result<String, DBusError>]>([])
        let done = DispatchSemaphore(value: 0)
        h.server.post {
            for name in [testBusName, "org.coffer.Nobody"] {
                h.server.nameOwner(name) { result in
                    answers.withLock { $0.append(result) }
                    done.signal()
                }
            }
        }
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        let results = answers.withLock { $0 }
        #expect((try? results.first?.get()) == h.client.uniqueName)
        guard results.count == 2, case .failure(let error) = results[1] else {
            Issue.record("expected an error for a name without owner: \(results)")
            return
        }
        #expect(error.name == DBusError.Name.nameHasNoOwner)
    }

    @Test func unicastSignalReachesOnlyItsDestination() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let receiver = h.client
        let bystander = try h.newClient()
        let rule = SignalRule(interface: "org.coffer.Prompt", member: "Completed")
        try bystander.addMatch(rule.matchRule)   // subscribes to broadcasts only (no eavesdropping)
        let received = Mutex<[[DBusValue]]>([])
        let overheard = Mutex<[[DBusValue]]>([])
        receiver.addSignalHandler(rule) { m in received.withLock { $0.append((try? m.arguments()) ?? []) } }
        bystander.addSignalHandler(rule) { m in overheard.withLock { $0.append((try? m.arguments()) ?? []) } }
        h.startLoop(receiver)
        h.startLoop(bystander)
        h.startServer()

        let prompt: ObjectPath = "/org/freedesktop/secrets/prompt/p1"
        try h.server.emitSignal(path: prompt, interface: "org.coffer.Prompt", member: "Completed",
                                arguments: [.boolean(false), .variant(.objectPathArray(["/a"]))],
                                destination: receiver.uniqueName)
        // A broadcast after it: signals from one sender arrive in order, so once the bystander
        // has the broadcast it would already have had the unicast one.
        try h.server.emitSignal(path: prompt, interface: "org.coffer.Prompt", member: "Completed",
                                arguments: [.boolean(true), .variant(.string(""))])
        #expect(eventually { overheard.withLock { $0 }.count == 1 })
        #expect(eventually { received.withLock { $0 }.count == 1 })
        #expect(received.withLock { $0 }.first == [.boolean(false), .variant(.objectPathArray(["/a"]))])
        #expect(overheard.withLock { $0 } == [[.boolean(true), .variant(.string(""))]])
    }

    @Test func propertiesChangedIsEmitted() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let tree = ItemTree(count: 2)
        h.server.objectServer.register(prefix: ItemTree.prefix, tree: tree)
        h.startServer()
        let listener = try h.newClient()
        let rule = SignalRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", sender: h.server.uniqueName)
        try listener.addMatch(rule.matchRule)
        let seen = Mutex<[(ObjectPath?, [DBusValue])]>([])
        listener.addSignalHandler(rule) { m in seen.withLock { $0.append((m.path, (try? m.arguments()) ?? [])) } }
        h.startLoop(listener)

        let item = tree.path(of: 1)
        _ = try h.client.call(destination: h.server.uniqueName, path: item, interface: "org.freedesktop.DBus.Properties",
                              member: "Set", arguments: [.string("org.coffer.Item"), .string("Label"), .variant(.string("new"))])
        #expect(eventually { seen.withLock { $0 }.count == 1 })
        #expect(seen.withLock { $0 }.first?.0 == item)
        #expect(seen.withLock { $0 }.first?.1 == [.string("org.coffer.Item"), .variantDictionary(["Label": .string("new")]), .stringArray([])])

        try h.server.emitPropertiesChanged(path: "/org/coffer", interface: "org.coffer.Root",
                                           changed: [:], invalidated: ["Version"])
        #expect(eventually { seen.withLock { $0 }.count == 2 })
        #expect(seen.withLock { $0 }.last?.1 == [.string("org.coffer.Root"), .variantDictionary([:]), .stringArray(["Version"])])
    }

    @Test func disconnectingClientFiresNameVanished() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let vanished = Mutex<[String]>([])
        try h.server.onNameVanished { name in vanished.withLock { $0.append(name) } }
        h.startServer()
        let leaving = try h.newClient()
        let name = leaving.uniqueName
        #expect(try h.server.unixUser(of: name) == getuid())
        leaving.close()
        #expect(!leaving.isConnected)
        #expect(eventually { vanished.withLock { $0 }.contains(name) })
        #expect(!vanished.withLock { $0 }.contains(h.client.uniqueName))
        // The uid cache forgot the vanished name: asking again goes to the bus, which no longer knows it.
        #expect(throws: DBusError.self) { try h.server.unixUser(of: name) }
        expectDBusError(DBusError.Name.disconnected) {
            _ = try leaving.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                 interface: "org.freedesktop.DBus", member: "GetId")
        }
    }

    @Test func postRunsOnTheLoopThreadAndCallsWorkFromAnyThread() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let handlerThread = Mutex<pthread_t?>(nil)
        let postedThread = Mutex<pthread_t?>(nil)
        let asyncReply = Mutex<[DBusValue]?>(nil)
        h.server.objectServer.register(path: "/t", object: EchoObject(signatures: ["s"]))
        let probe = h.server.addSignalHandler(SignalRule(member: "Probe")) { _ in handlerThread.withLock { $0 = pthread_self() } }
        h.startServer()

        try h.client.emitSignal(path: "/t", interface: "org.coffer.Test", member: "Probe", destination: h.server.uniqueName)
        let server = h.server
        server.post {
            postedThread.withLock { $0 = pthread_self() }
            // On the loop thread: an async call completes without blocking the loop.
            let m = try! DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "ListNames")
            server.callAsync(m) { result in asyncReply.withLock { $0 = try? result.get().arguments() } }
        }
        #expect(eventually { handlerThread.withLock { $0 } != nil && postedThread.withLock { $0 } != nil && asyncReply.withLock { $0 } != nil })
        #expect(pthread_equal(handlerThread.withLock { $0 }!, postedThread.withLock { $0 }!) != 0)
        #expect(asyncReply.withLock { $0 }?.first?.stringArray?.contains(server.uniqueName) == true)
        h.server.removeHandler(probe)

        // Blocking calls from a non-loop thread while the loop runs are forwarded to the loop.
        let id = try h.server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "GetId")
        #expect(id.first?.string?.count == 32)
        #expect(try h.server.unixUser(of: h.client.uniqueName) == getuid())
        #expect(try h.client.call(destination: h.server.uniqueName, path: "/t", interface: testInterface,
                                  member: "Echo0", arguments: [.string("x")]) == [.string("x")])
    }

    @Test func stoppingTheLoopFirstAnswersTheCallsOtherThreadsAwait() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(prefix: ItemTree.prefix, tree: ItemTree(count: 1))
        h.startServer()
        let client = h.client, server = h.server.uniqueName
        for _ in 0..<10 {
            let loop = LoopThread(client)
            let answered = Mutex(0)
            let done = DispatchGroup()
            for _ in 0..<3 {
                DispatchQueue.global().async(group: done) {
                    // 30 ms each, answered one after another: the loop is asked to stop meanwhile.
                    let reply = try? client.call(destination: server, path: "/org/coffer/items/item_2d0",
                                                 interface: "org.coffer.Item", member: "Slow", arguments: [.uint32(30)],
                                                 timeout: .seconds(20))
                    if reply != nil { answered.withLock { $0 += 1 } }
                }
            }
            usleep(10_000)
            #expect(loop.stop(), "the loop did not stop")
            // Before, a call the loop had sent was left unanswered once it stopped (until its timeout).
            #expect(done.wait(timeout: .now() + 5) == .success, "a call was left waiting after the loop stopped")
            #expect(answered.withLock { $0 } == 3)
        }
    }

    @Test func callTimeoutGivesNoReply() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(prefix: ItemTree.prefix, tree: ItemTree(count: 1))
        h.startServer()
        let start = Date()
        expectDBusError(DBusError.Name.noReply) {
            _ = try h.client.call(destination: h.server.uniqueName, path: "/org/coffer/items/item_2d0",
                                  interface: "org.coffer.Item", member: "Slow", arguments: [.uint32(2000)],
                                  timeout: .milliseconds(300))
        }
        #expect(Date().timeIntervalSince(start) < 1.5)
        expectDBusError(DBusError.Name.serviceUnknown) {
            _ = try h.client.call(destination: "org.coffer.Nobody", path: "/", interface: nil, member: "M")
        }
    }

    @Test func loopReturnsWhenTheBusGoesAway() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(address: bus.address)
        let returned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            connection.run()
            returned.signal()
        }
        usleep(50_000)
        bus.stop()
        #expect(returned.wait(timeout: .now() + 10) == .success)
        #expect(!connection.isConnected)
    }

    @Test func stopBeforeRunReturnsAtOnce() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        connection.stop()
        connection.run()   // must not hang
        connection.post { }
        connection.stop()
        connection.run()
    }
}
