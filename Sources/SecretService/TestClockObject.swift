import CofferCore
import DBusKit
import SecretServiceProtocol

/// `/org/coffer/TestClock`: lets Coffer's tests move a manual clock (`TestClockInterface`).
struct TestClockObject: DBusObject {
    let server: SecretServer

    var interfaces: [InterfaceDescription] { [TestClockInterface.description] }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        guard call.member == TestClockInterface.advance, let milliseconds = call.arguments.first?.uint64 else {
            throw DBusError.unknownMethod("\(TestClockInterface.name) has no method \(call.member)")
        }
        // The timers it passes post their work to this loop; the reply is posted after it.
        Clock.source.advance(by: milliseconds)
        let now = Clock.nowInMilliseconds()
        server.connection.post { [server] in
            server.log(TestClockInterface.logLine(at: now))
            call.reply([.uint64(now)])
        }
        return .deferred
    }
}

extension SecretServer {
    /// Serves `/org/coffer/TestClock` when the process's clock is a manual one (a test build
    /// under Coffer's tests); does nothing otherwise.
    public func serveTestClock() {
        guard Clock.source.isManual else { return }
        connection.objectServer.register(path: TestClockInterface.path, object: TestClockObject(server: self))
    }
}
