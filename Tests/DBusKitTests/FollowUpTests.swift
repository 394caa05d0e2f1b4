@testable import DBusKit
import CofferTestSupport
import Dispatch
import Foundation
import Synchronization
import SystemKit
import Testing

/// `postFollowUp`: work that waits for the loop's next message (or its delay), and that
/// nothing the loop thread queues meanwhile overtakes.
@Suite(.timeLimit(.minutes(5))) struct FollowUpTests {
    /// What happened, in order.
    final class Record: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A server answering `Echo0` at /t, a listener recording the server's `Probe` signals, and
    /// one call answered, so that nothing from connecting is left for the server to dispatch.
    private static func harness(followUpDelay: Duration) throws -> (Harness, Record) {
        let h = try Harness()
        h.server.loop.followUpDelay = followUpDelay
        h.server.objectServer.register(path: "/t", object: EchoObject(signatures: ["s"]))
        h.startServer()
        let listener = try h.newClient()
        let rule = SignalRule(interface: testInterface, member: "Probe", sender: h.server.uniqueName)
        try listener.addMatch(rule.matchRule)
        let heard = Record()
        listener.addSignalHandler(rule) { m in heard.add((try? m.arguments())?.first?.string ?? "?") }
        h.startLoop(listener)
        try echo(h)
        return (h, heard)
    }

    private static func echo(_ h: Harness) throws {
        #expect(try h.client.call(destination: h.server.uniqueName, path: "/t", interface: testInterface,
                                  member: "Echo0", arguments: [.string("x")]) == [.string("x")])
    }

    private static func probe(_ server: DBusConnection, _ name: String) {
        try? server.emitSignal(path: "/t", interface: testInterface, member: "Probe", arguments: [.string(name)])
    }

    @Test func aFollowUpWaitsForTheNextMessageAndWhatTheLoopQueuesWaitsBehindIt() throws {
        let (h, heard) = try Self.harness(followUpDelay: .seconds(60))
        defer { h.shutdown() }
        let server = h.server
        let ran = Record()
        server.postFollowUp {
            ran.add("follow-up")
            server.post { ran.add("posted by the follow-up") }
            Self.probe(server, "from the follow-up")
        }
        server.post {
            ran.add("posted before")
            // On the loop thread, with the follow-up waiting: both wait behind it.
            Self.probe(server, "emitted meanwhile")
            server.post { ran.add("posted meanwhile") }
        }
        #expect(eventually { ran.all == ["posted before"] })
        // Two more turns of the loop with work but no message: the follow-up still waits.
        for turn in ["a turn later", "two turns later"] {
            server.post { ran.add(turn) }
            #expect(eventually { ran.all.last == turn })
        }
        #expect(ran.all == ["posted before", "a turn later", "two turns later"], "the follow-up ran without a message")
        #expect(heard.all.isEmpty)

        try Self.echo(h)
        #expect(eventually { ran.all.count == 6 && heard.all.count == 2 })
        #expect(ran.all == ["posted before", "a turn later", "two turns later", "follow-up", "posted by the follow-up", "posted meanwhile"])
        #expect(heard.all == ["from the follow-up", "emitted meanwhile"])

        // With nothing waiting, the loop's posts and signals go at once again.
        server.post {
            Self.probe(server, "later")
            server.post { ran.add("posted later") }
        }
        #expect(eventually { ran.all.last == "posted later" && heard.all.last == "later" })
    }

    @Test func aFollowUpRunsAfterItsDelayWhenNoMessageComes() throws {
        let (h, _) = try Self.harness(followUpDelay: .milliseconds(50))
        defer { h.shutdown() }
        let ran = Mutex<ContinuousClock.Instant?>(nil)
        let posted = ContinuousClock.now
        h.server.postFollowUp { ran.withLock { $0 = .now } }
        #expect(eventually { ran.withLock { $0 } != nil })
        let waited = try #require(ran.withLock { $0 }) - posted
        #expect(waited >= .milliseconds(50), "it ran after \(waited), before its delay")
    }

    /// Posts through `slot` after the loop has gone back to poll with no message to come;
    /// returns how long the follow-up took to run and how many times the loop was woken meanwhile.
    private static func postWhenIdle(_ slot: FollowUpSlot, on server: DBusConnection) throws -> (Duration, Int) {
        usleep(200_000)
        let ran = Mutex<ContinuousClock.Instant?>(nil)
        let wakeUps = server.loop.wakeUps.load(ordering: .relaxed)
        let posted = ContinuousClock.now
        slot.post { ran.withLock { $0 = .now } }
        #expect(server.loop.reservedFollowUps == 0)
        #expect(eventually { ran.withLock { $0 } != nil }, "a reserved follow-up never ran")
        let waited = try #require(ran.withLock { $0 }) - posted
        return (waited, server.loop.wakeUps.load(ordering: .relaxed) - wakeUps)
    }

    @Test func aReservedFollowUpIsPostedWithoutAWakeUpAndRunsAfterItsDelay() throws {
        let (h, _) = try Self.harness(followUpDelay: .milliseconds(50))
        defer { h.shutdown() }
        let server = h.server
        // Reserved on the loop thread, as a call's handler does.
        let slot = Mutex<FollowUpSlot?>(nil)
        server.post { slot.withLock { $0 = server.reserveFollowUp() } }
        #expect(eventually { slot.withLock { $0 } != nil })
        #expect(server.loop.reservedFollowUps == 1)

        // The loop must look again by itself.
        let (waited, wakeUps) = try Self.postWhenIdle(try #require(slot.withLock { $0 }), on: server)
        #expect(wakeUps == 0, "posting a reserved follow-up woke the loop")
        #expect(waited >= .milliseconds(50), "it ran after \(waited), before its delay")
        #expect(waited < .seconds(1), "it ran after \(waited), long after its delay")
    }

    @Test func aFollowUpReservedFromAnotherThreadRunsAfterItsDelayToo() throws {
        let (h, _) = try Self.harness(followUpDelay: .milliseconds(50))
        defer { h.shutdown() }
        // Reserving wakes the loop, which was waiting with no time limit.
        let slot = h.server.reserveFollowUp()
        let (waited, _) = try Self.postWhenIdle(slot, on: h.server)
        #expect(waited >= .milliseconds(50) && waited < .seconds(1), "it ran after \(waited)")
    }

    @Test func aSlotLetGoOfWithoutBeingPostedGivesItsReservationUp() throws {
        let (h, _) = try Self.harness(followUpDelay: .seconds(60))
        defer { h.shutdown() }
        var slot: FollowUpSlot? = h.server.reserveFollowUp()
        #expect(h.server.loop.reservedFollowUps == 1)
        withExtendedLifetime(slot) {}
        slot = nil
        #expect(h.server.loop.reservedFollowUps == 0)
    }

    /// A server on a bus of its own, its loop running on a thread the test stops.
    private static func stoppableServer(followUpDelay: Duration) throws -> (PrivateBus, DBusConnection, LoopThread) {
        let bus = try PrivateBus()
        do {
            let server = try DBusConnection(address: bus.address)
            server.loop.followUpDelay = followUpDelay
            return (bus, server, LoopThread(server))
        } catch {
            bus.stop()   // the caller's defer is not in place yet
            throw error
        }
    }

    @Test func aStoppingLoopWaitsForItsReservedFollowUps() throws {
        let (bus, server, loop) = try Self.stoppableServer(followUpDelay: .milliseconds(20))
        defer { bus.stop() }
        let slot = server.reserveFollowUp()
        let ran = Record()
        Threads.start(name: "late writer") {
            usleep(300_000)   // a write still under way when the loop is asked to stop
            slot.post { ran.add("follow-up") }
        }
        #expect(loop.stop(), "the loop did not stop")
        #expect(ran.all == ["follow-up"])
    }

    @Test func stoppingTheLoopRunsTheWaitingFollowUpsAndWhatTheyPost() throws {
        let (bus, server, loop) = try Self.stoppableServer(followUpDelay: .seconds(60))
        defer { bus.stop() }
        // A call answered: what the bus sent on connecting is dispatched, so nothing else is.
        let client = try DBusConnection(address: bus.address)
        _ = try client.call(destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        let ran = Record()
        let queued = Mutex(false)
        server.post {
            server.postFollowUp {
                ran.add("follow-up")
                server.post { ran.add("posted by the follow-up") }
            }
            server.post { ran.add("posted") }
            queued.withLock { $0 = true }
        }
        #expect(eventually { queued.withLock { $0 } })
        #expect(ran.all.isEmpty)
        #expect(loop.stop(), "the loop did not stop")
        #expect(ran.all == ["follow-up", "posted by the follow-up", "posted"])
    }
}
