import CofferCore
import CofferTestSupport
import DBusKit
import Foundation
import SecretService
import SecretServiceProtocol

/// A `SecretServer` over an in-memory keychain (the session collection only), served from a
/// thread of this test process on a private bus, and a client connection to it: for tests of
/// the protocol logic that need no daemon process.
final class InProcessServer: @unchecked Sendable {
    let bus: PrivateBus
    let client: DBusConnection
    private let serverConnection: DBusConnection
    private let server: SecretServer
    private let loop: Thread

    init() throws {
        bus = try PrivateBus()
        serverConnection = try DBusConnection(address: bus.address)
        server = SecretServer(keychain: Keychain(provider: nil), connection: serverConnection, passwords: nil, log: { _ in })
        try server.start()
        let connection = serverConnection
        loop = Thread { connection.run() }
        loop.start()
        client = try DBusConnection(address: bus.address)
    }

    /// The server's unique name, to call it by.
    var name: String { serverConnection.uniqueName }

    func call<M: DBusMethod>(_ method: M.Type, on path: ObjectPath, _ input: M.Input) throws -> M.Output {
        try client.call(M.self, destination: name, path: path, input)
    }

    /// Returns once the server has finished every call sent before (one more round trip).
    func drain() throws {
        _ = try client.call(destination: name, path: SecretPath.service, interface: "org.freedesktop.DBus.Properties",
                            member: "Get", arguments: [.string(ServiceInterface.name), .string(ServiceInterface.Property.collections)])
    }

    func stop() {
        serverConnection.stop()
        client.close()
        bus.stop()
    }
}
