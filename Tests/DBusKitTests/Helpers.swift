import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import Testing


/// A private bus, a server connection with a running loop, and a client connection.
final class Harness: @unchecked Sendable {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    private var loops: [LoopThread] = []

    init() throws {
        bus = try PrivateBus()
        server = try DBusConnection(address: bus.address)
        client = try DBusConnection(address: bus.address)
    }

    /// Starts the server loop (register objects first or after; both work).
    func startServer() { loops.append(LoopThread(server)) }

    /// Starts a loop for any connection (e.g. a client that receives signals).
    @discardableResult
    func startLoop(_ connection: DBusConnection) -> LoopThread {
        let loop = LoopThread(connection)
        loops.append(loop)
        return loop
    }

    func newClient() throws -> DBusConnection { try DBusConnection(address: bus.address) }

    func shutdown() {
        for loop in loops.reversed() { #expect(loop.stop(), "event loop did not stop within 10 s") }
        loops.removeAll()
        bus.stop()
    }
}

/// Expects `body` to throw a `DBusError` named `name`; returns it for further checks.
@discardableResult
func expectDBusError(_ name: String, sourceLocation: SourceLocation = #_sourceLocation,
                     _ body: () throws -> Void) -> DBusError? {
    do {
        try body()
        Issue.record("expected \(name), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        #expect(error.name == name, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected DBusError \(name), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}



let testBusName = "org.coffer.Test"
let testInterface = "org.coffer.Test"
