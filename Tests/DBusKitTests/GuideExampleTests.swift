import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import Synchronization
import Testing

/// The pattern of the API guide's example (/work/contracts/DBusKit-API.md §6), compiled in
/// Swift 6 mode: a non-Sendable, loop-owned object finishing a deferred call after slow work.
final class VaultObject: DBusObject {
    static let vaultInterface = InterfaceDescription("org.coffer.Vault",
        methods: [
            MethodDescription("SetSecret", in: [ArgumentDescription("secret", "(oayays)")]),
            MethodDescription("GetSecret", in: [ArgumentDescription("session", .objectPath)],
                              out: [ArgumentDescription("secret", "(oayays)")]),
        ],
        properties: [PropertyDescription("Label", .string, access: .readWrite)])
    var interfaces: [InterfaceDescription] { [Self.vaultInterface] }

    private var stored: [UInt8] = []
    private(set) var label = "vault"
    private(set) var storedOnLoopThread = false

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        switch call.member {
        case "SetSecret":
            let me = LoopOwned(self, on: call.connection)
            let input = call.arguments[0]
            DispatchQueue.global().async {
                usleep(50_000)                                   // "KDF"
                let derived = (input.structureFields?[2].bytes ?? []).map { $0 ^ 0xff }
                call.connection.post {
                    me.value.stored = derived
                    me.value.storedOnLoopThread = call.connection.isOnLoopThread
                    call.reply()
                }
            }
            return .deferred
        case "GetSecret":
            return .reply([.structure([call.arguments[0], .bytes([]), .bytes(stored), .string("text/plain")])])
        default:
            throw DBusError.unknownMethod(call.member)
        }
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue { .string(label) }

    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        label = value.string ?? ""
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
        // Read the object's state on its own thread.
        let onLoop = Mutex<Bool?>(nil)
        let confined = LoopOwned(vault, on: h.server)
        h.server.post { onLoop.withLock { $0 = confined.value.storedOnLoopThread } }
        #expect(eventually { onLoop.withLock { $0 } != nil })
        #expect(onLoop.withLock { $0 } == true)
    }
}
