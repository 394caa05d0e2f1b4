import CofferCore
import CofferStore
import CofferTestSupport
import DBusKit
import Foundation
import SecretService
import SecretServiceClient
import SecretServiceProtocol
import Synchronization

/// A `SecretServer` served from a thread of this test process on a private bus, with a client
/// of it: for tests of the protocol logic that need no daemon process. The keychain has the
/// session collection, and with `store`, a file store in a temporary directory whose
/// collections derive keys with the fast test parameters; prompts ask `passwords`.
final class InProcessServer: @unchecked Sendable {
    let bus: PrivateBus
    let keychain: Keychain
    /// A client library on its own connection, calling the server by its unique name.
    let client: SecretServiceClient
    let passwords: ScriptedPasswords
    private let serverConnection: DBusConnection
    private let server: SecretServer
    private let loop: LoopThread
    private let directory: String?

    /// `portalAudit` gets the Secret portal's audit events.
    init(store: Bool = false, answers: [PasswordAnswer] = [], portalAudit: (any AuditRecorder)? = nil) throws {
        bus = try PrivateBus()
        if store {
            let directory = NSTemporaryDirectory() + "coffer-inprocess-" + UUID().uuidString
            keychain = Keychain(provider: try FileStore(directory: directory, kdf: .testing, warn: { _ in }))
            self.directory = directory
        } else {
            keychain = Keychain(provider: nil)
            directory = nil
        }
        passwords = ScriptedPasswords(answers)
        serverConnection = try DBusConnection(address: bus.address)
        server = SecretServer(keychain: keychain, connection: serverConnection, passwords: passwords, log: { _ in })
        try server.start()
        server.startSecretPortal(audit: portalAudit, frontends: [Executables.thisProcess])
        loop = LoopThread(serverConnection)
        client = SecretServiceClient(connection: try DBusConnection(address: bus.address),
                                     destination: serverConnection.uniqueName)
    }

    /// The server's unique name, to call it by.
    var name: String { serverConnection.uniqueName }

    func call<M: DBusMethod>(_ method: M.Type, on path: ObjectPath, _ input: M.Input) throws -> M.Output {
        try client.call(M.self, on: path, input)
    }

    /// Returns once the server has finished every call sent before (one more round trip).
    func drain() throws {
        _ = try client.collections()
    }

    func stop() {
        client.close()
        loop.stop()
        bus.stop()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// A `PasswordAsker` that answers from a script and keeps what it was asked.
final class ScriptedPasswords: PasswordAsker {
    private let answers: Mutex<[PasswordAnswer]>
    private let asked = Mutex<[PasswordRequest]>([])

    init(_ answers: [PasswordAnswer]) { self.answers = Mutex(answers) }

    func ask(_ request: PasswordRequest) -> PasswordAnswer {
        asked.withLock { $0.append(request) }
        return answers.withLock { $0.isEmpty ? .cancelled : $0.removeFirst() }
    }

    /// Every request so far.
    var requests: [PasswordRequest] { asked.withLock { $0 } }

    func closeDialogs() {}
}
