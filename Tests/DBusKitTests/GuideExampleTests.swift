import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import Synchronization
import Testing

/// An object finishing a deferred call after slow work, back on the loop thread, compiled in
/// Swift 6 mode: objects are Sendable (the loop and other threads both reach them), their
/// state behind a Mutex.
final class VaultObject: DBusObject {
    static let vaultInterface = InterfaceDescription("org.coffer.Vault",
        methods: [
            MethodDescription("SetSecret", in: [ArgumentDescription("secret", "(oayays)")]),
            MethodDescription("GetSecret", in: [ArgumentDescription("session", .objectPath)],
                              out: [ArgumentDescription("secret", "(oayays)")]),
        ],
        properties: [PropertyDescription("Label", .string, access: .readWrite)])
    var interfaces: [InterfaceDescription] { [Self.vaultInterface] }

    private struct State {
        var stored: [UInt8] = []
        var label = "vault"
        var storedOnLoopThread = false
    }
    private let state = Mutex(State())
    var storedOnLoopThread: Bool { state.withLock { $0.storedOnLoopThread } }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        switch call.member {
        case "SetSecret":
            let input = call.arguments[0]
            DispatchQueue.global().async {
                usleep(50_000)                                   // "KDF"
                let derived = (input.structureFields?[2].bytes ?? []).map { $0 ^ 0xff }
                call.connection.post {
                    self.state.withLock { state in
                        state.stored = derived
                        state.storedOnLoopThread = call.connection.isOnLoopThread
                    }
                    call.reply()
                }
            }
            return .deferred
        case "GetSecret":
            return .reply([.structure([call.arguments[0], .bytes([]), .bytes(state.withLock { $0.stored }), .string("text/plain")])])
        default:
            throw DBusError.unknownMethod(call.member)
        }
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue { .string(state.withLock { $0.label }) }

    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        state.withLock { $0.label = value.string ?? "" }
        try call.connection.emitPropertiesChanged(path: "/vault", interface: interface, changed: [name: value])
        return .empty
    }
}

@Suite(.timeLimit(.minutes(10))) struct GuideExampleTests {
    @Test func deferredWorkComesBackToTheLoopThread() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let vault = VaultObject()
        h.server.objectServer.register(path: "/vault", object: vault)
        h.startServer()
        #expect(!h.server.isOnLoopThread)
        let session: ObjectPath = "/org/freedesktop/secrets/session/s1"
        _ = try h.client.call(destination: h.server.uniqueName, path: "/vault", interface: "org.coffer.Vault",
                              member: "SetSecret",
                              arguments: [.structure([.objectPath(session), .bytes([]), .bytes([0x0f, 0xf0]), .string("text/plain")])])
        let reply = try h.client.call(destination: h.server.uniqueName, path: "/vault", interface: "org.coffer.Vault",
                                      member: "GetSecret", arguments: [.objectPath(session)])
        #expect(reply.first?.structureFields?[2] == .bytes([0xf0, 0x0f]))
        #expect(vault.storedOnLoopThread)
    }
}
