import CofferCore
import CofferCrypto
import DBusKit
@testable import SecretService
import SecretServiceProtocol
import Testing

/// A plain session's secrets go from the keychain to the wire in secure memory, and every
/// buffer they used is released (and so wiped: `SecureAllocator.release` zeroes each block,
/// `SecureAllocatorTests.releasedSlotsAreZeroed`) once the reply is sent.
@Suite(.timeLimit(.minutes(2))) struct SecretBufferTests {
    /// The buffer a plain session sends is the keychain's own secure buffer, all the way into
    /// the D-Bus value libdbus marshals from: no ordinary copy is made on the way.
    @Test func aPlainSessionSendsTheSecretsOwnSecureBuffer() throws {
        Crypto.initialize()
        let (session, _) = try TransferSession.open(algorithm: TransferSession.plainName, input: .string(""),
                                                    path: SecretPath.session(1), owner: ":1.1")
        let secret = Secret(bytes: try SecureBytes(Array("hunter2".utf8)), contentType: "text/plain")
        let wire = try session.encode(secret)
        #expect(wire.value === secret.bytes)
        guard case .structure(let fields) = wire.dbusValue, case .secureBytes(let sent) = fields[2] else {
            Issue.record("the secret is not sent as secure bytes: \(wire.dbusValue.signatureString)")
            return
        }
        #expect(sent === secret.bytes)
        // And what a client sends is decoded without a copy either.
        #expect(try session.decode(wire).bytes === secret.bytes)
    }

    @Test func plainSecretsLeaveNoBufferBehindOnceTheReplyIsSent() throws {
        Crypto.initialize()
        let server = try InProcessServer()
        defer { server.stop() }
        let session = try server.call(ServiceInterface.OpenSession.self, on: SecretPath.service,
                                      .init(algorithm: "plain", input: .string(""))).session
        var items: [ObjectPath] = []
        for n in 0..<8 {
            let wire = WireSecret(session: session, parameters: [], value: try SecureBytes(Array("secret \(n)".utf8)),
                                  contentType: "text/plain")
            items.append(try server.call(CollectionInterface.CreateItem.self, on: SecretPath.collection(.session),
                                         .init(properties: .init(label: "item \(n)", attributes: ["n": "\(n)"]),
                                               secret: wire, replace: false)).item)
        }
        try server.drain()

        let before = SecureBytes.liveBuffers
        for (n, item) in items.enumerated() {
            let secret = try server.call(ItemInterface.GetSecret.self, on: item, .init(session: session)).secret
            #expect(secret.value == (try SecureBytes(Array("secret \(n)".utf8))))
        }
        let all = try server.call(ServiceInterface.GetSecrets.self, on: SecretPath.service,
                                  .init(items: items, session: session)).secrets
        #expect(all.count == items.count)
        #expect(all[items[3]]?.value == (try SecureBytes(Array("secret 3".utf8))))
        _ = consume all
        try server.drain()
        #expect(SecureBytes.liveBuffers == before, "a secret's buffer outlived the reply that carried it")
    }
}
