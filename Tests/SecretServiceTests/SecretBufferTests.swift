import CofferCore
import CofferCrypto
import DBusKit
@testable import SecretService
import SecretServiceProtocol
import Foundation
import Testing

/// A plain session's secrets go from the keychain to the wire in secure memory, and every
/// buffer they used is released (and so wiped: `SecureAllocator.release` zeroes each block,
/// `SecureAllocatorTests.releasedSlotsAreZeroed`) once the reply is sent.
@Suite(.timeLimit(.minutes(5))) struct SecretBufferTests {
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

    /// A DH session encoding the secrets of one reply: each under an IV of its own, each
    /// decrypting to its secret with the key the client derives; no more than announced.
    @Test func aDHSessionEncodesEachSecretOfAReplyUnderItsOwnIV() throws {
        Crypto.initialize()
        let client = try DHKeyPair()
        let (session, serverKey) = try TransferSession.open(algorithm: TransferSession.dhName, input: .bytes(client.publicKey),
                                                            path: SecretPath.session(1), owner: ":1.1")
        let key = try AES128CBCKey(try SecretServiceKey.derive(sharedSecret: try client.sharedSecret(peerPublicKey: try #require(serverKey.bytes))))
        let secrets = try (0..<5).map { Secret(bytes: try SecureBytes(Array("secret \($0)".utf8)), contentType: "text/plain") }
        var wires: [WireSecret] = []
        try session.encodeEach(upTo: secrets.count) { encode in
            for secret in secrets { wires.append(try encode(secret)) }
            #expect(throws: DBusError.self) { try encode(secrets[0]) }
        }
        #expect(Set(wires.map(\.parameters)).count == secrets.count && wires.allSatisfy { $0.parameters.count == 16 })
        for (wire, secret) in zip(wires, secrets) {
            #expect(try key.decrypt(wire.value, iv: wire.parameters) == secret.bytes)
            #expect(try session.decode(wire).bytes == secret.bytes)
        }
    }

    /// Run in a process of its own (an exit test), so that no other test's secure buffers
    /// come and go while the count is watched.
    @Test func plainSecretsLeaveNoBufferBehindOnceTheReplyIsSent() async {
        await #expect(processExitsWith: .success) {
            do {
                exit(try SecretBufferTests.buffersOutliveTheirReplies() ? 1 : 0)
            } catch {
                print("failed: \(error)")
                exit(2)
            }
        }
    }

    /// Whether any secure buffer made while a plain session read secrets (one at a time, and
    /// many at once) is still there after the replies went out.
    static func buffersOutliveTheirReplies() throws -> Bool {
        Crypto.initialize()
        let server = try InProcessServer()
        defer { server.stop() }
        let session = try server.client.openSession(.plain)
        let collection = SecretPath.collection(.session)
        var items: [ObjectPath] = []
        for n in 0..<8 {
            items.append(try server.client.createItem(in: collection, label: "item \(n)", attributes: ["n": "\(n)"],
                                                      secret: try SecureBytes(Array("secret \(n)".utf8)), session: session))
        }
        try server.drain()

        let before = SecureBytes.liveBuffers
        for (n, item) in items.enumerated() {
            guard try server.client.secret(of: item, session: session).bytes == (try SecureBytes(Array("secret \(n)".utf8))) else {
                throw DBusError.failed("item \(n) has another secret")
            }
        }
        var read = 0
        try server.client.forEachSecret(of: items, session: session) { _, _ in read += 1 }
        guard read == items.count else { throw DBusError.failed("GetSecrets gave \(read) of \(items.count) secrets") }
        try server.drain()
        let after = SecureBytes.liveBuffers
        if after != before { print("secure buffers: \(before) before the reads, \(after) after") }
        return after != before
    }
}
