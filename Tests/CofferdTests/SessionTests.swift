import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SystemKit
@_spi(KeyAgreement) import SecretServiceClient
import SecretServiceProtocol
import Testing

/// OpenSession, the transfer algorithms and session ownership.
@Suite(.timeLimit(.minutes(10))) struct SessionTests {
    @Test func plainSessionRoundTripsBothWays() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let reply = try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service,
                                      arguments: [.string(ClientSession.plainAlgorithm), .variant(.string(""))])
        try #require(reply.count == 2)
        #expect(reply[0] == .variant(.string("")), "plain output is a variant of empty s")
        #expect(reply[1].objectPath?.parent == SecretPath.sessions)
        let session = try f.client.library.openSession(.plain)
        #expect(!session.isEncrypted)

        let secret: [UInt8] = [0, 1, 2, 0xff, 0x0a] + Array("plain secret".utf8)
        let item = try f.client.createItem(label: "plain", attributes: ["via": "plain"], secret: secret,
                                           contentType: "application/octet-stream", session: session)
        let wire = try f.client.call(ItemInterface.GetSecret.self, on: item, .init(session: session.path)).secret
        #expect(wire.session == session.path && wire.parameters.isEmpty, "plain secrets name their session and carry no parameters")
        #expect(wire.value.unprotected == secret)
        #expect(wire.contentType == "application/octet-stream")
        #expect(try f.client.secrets(of: [item], session: session) == [item: secret])

        // An empty secret travels too.
        try f.client.library.setSecret(of: item, to: SecureBytes([UInt8]()), session: session)
        #expect(try f.client.secretBytes(of: item, session: session) == [])
    }

    @Test func dhSessionRoundTripsBothWays() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let session = try f.client.library.openSession()
        let plain = try f.client.library.openSession(.plain)
        for secret in [[], Array("x".utf8), Array("exactly 16 bytes".utf8), (0..<1000).map { UInt8($0 % 256) }] {
            // Client -> server (CreateItem), checked through a plain session and back through DH.
            let item = try f.client.createItem(label: "dh \(secret.count)", attributes: ["len": "\(secret.count)"],
                                               secret: secret, session: session)
            #expect(try f.client.secretBytes(of: item, session: plain) == secret)
            #expect(try f.client.secretBytes(of: item, session: session) == secret)
            #expect(try f.client.secrets(of: [item], session: session) == [item: secret])
        }
        // Each secret names its session and gets a fresh IV of 16 bytes.
        let item = try #require(try f.client.items(of: SecretPath.login).first)
        let a = try f.client.call(ItemInterface.GetSecret.self, on: item, .init(session: session.path)).secret
        let b = try f.client.call(ItemInterface.GetSecret.self, on: item, .init(session: session.path)).secret
        #expect(a.session == session.path && a.parameters.count == 16 && b.parameters.count == 16)
        #expect(a.parameters != b.parameters, "IV reused")
    }

    /// Many DH sessions, alternating how the client encodes its public key (padded to the
    /// prime's 128 bytes, without leading zeros, with three more), each checked in both
    /// directions against a plain session. With enough of them the shared secret S has a
    /// leading zero byte (about 1 in 256), where an unpadded S would give a different key.
    @Test func manyDHSessionsAllAgreeOnTheKey() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let plain = try f.client.library.openSession(.plain)
        let item = try f.client.createItem(label: "rotating", attributes: ["dh": "many"], secret: "start", session: plain)
        let encodings: [([UInt8]) -> [UInt8]] = [{ $0 }, { Array($0.drop { $0 == 0 }) }, { [0, 0, 0] + $0 }]
        let seed = testSeed(19)
        var random = SeededGenerator(seed: seed)
        var leadingZeros = 0
        var sessions = 0
        while sessions < 300 || (leadingZeros == 0 && sessions < 3000) {
            let pair = try DHKeyPair()
            let (session, shared) = try ClientSession.openEncrypted(with: f.client.library, keyPair: pair,
                                                                    sending: encodings[sessions % 3](pair.publicKey))
            sessions += 1
            let leadingZero = shared[0] == 0
            if leadingZero { leadingZeros += 1 }
            let secret = Array("secret number \(sessions) ".utf8) + random.bytes(sessions % 40)
            try f.client.library.setSecret(of: item, to: SecureBytes(secret), session: session)
            let viaPlain = try f.client.secretBytes(of: item, session: plain)
            let viaDH = try f.client.secretBytes(of: item, session: session)
            guard viaPlain == secret, viaDH == secret else {
                Issue.record("session \(sessions) (leading zero: \(leadingZero)) disagrees; seed \(seed)")
                break
            }
            try f.client.library.closeSession(session)
        }
        #expect(leadingZeros > 0, "no session had a shared secret with a leading zero in \(sessions) tries")
        #expect(f.daemonIsRunning)
    }

    @Test func unknownAlgorithmAndWrongInputTypes() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        expectDBusError(DBusError.Name.notSupported) {
            try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string("rot13"), .variant(.string(""))])
        }
        expectDBusError(DBusError.Name.notSupported) {
            try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string("dh-ietf2048-sha256-aes128-cbc-pkcs7"), .variant(.bytes([2]))])
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string("plain"), .variant(.bytes([]))])
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string(ClientSession.encryptedAlgorithm), .variant(.string(""))])
        }
        expectDBusError(DBusError.Name.invalidArgs) {
            try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string(ClientSession.encryptedAlgorithm), .variant(.uint32(2))])
        }
        // Degenerate public keys: empty, 1, p-1, p, and longer than the prime.
        let prime: [UInt8] = DHTestValues.prime
        var primeMinusOne = prime
        primeMinusOne[127] -= 1
        for bad in [[], [1], [0, 0, 1], primeMinusOne, prime, [UInt8](repeating: 0xff, count: 129)] {
            expectDBusError(DBusError.Name.invalidArgs) {
                try f.client.call(ServiceInterface.OpenSession.self, on: SecretPath.service, arguments: [.string(ClientSession.encryptedAlgorithm), .variant(.bytes(bad))])
            }
        }
        // A good session still opens afterwards.
        _ = try f.client.library.openSession()
    }

    @Test func sessionsBelongToTheirClient() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let mine = try f.client.library.openSession()
        let item = try f.client.createItem(label: "owned", attributes: ["own": "1"], secret: "mine", session: mine)
        let other = try f.newClient()
        let theirs = try other.library.openSession()

        // Using another client's session: NoSession everywhere a session is named.
        expectDBusError(SecretServiceError.Name.noSession) { _ = try f.client.secretBytes(of: item, session: theirs) }
        expectDBusError(SecretServiceError.Name.noSession) { _ = try f.client.secrets(of: [item], session: theirs) }
        expectDBusError(SecretServiceError.Name.noSession) {
            try f.client.createItem(label: "x", attributes: ["own": "2"], secret: "x", session: theirs)
        }
        expectDBusError(SecretServiceError.Name.noSession) {
            try f.client.library.setSecret(of: item, to: SecureBytes("x"), session: theirs)
        }
        // Closing it is not for us either.
        expectDBusError(DBusError.Name.unknownMethod, DBusError.Name.unknownObject) { try f.client.library.closeSession(theirs) }
        #expect(try other.secrets(of: [item], session: theirs) == [item: Array("mine".utf8)])

        // Sessions that never existed.
        expectDBusError(SecretServiceError.Name.noSession) {
            _ = try f.client.call(ItemInterface.GetSecret.self, on: item, .init(session: SecretPath.session(999_999)))
        }
        expectDBusError(SecretServiceError.Name.noSession) {
            _ = try f.client.call(ServiceInterface.GetSecrets.self, .init(items: [item], session: SecretPath.login))
        }

        // Close ends it: further use is NoSession, the object is gone.
        try f.client.library.closeSession(mine)
        expectDBusError(SecretServiceError.Name.noSession) { _ = try f.client.secretBytes(of: item, session: mine) }
        expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod, SecretServiceError.Name.noSuchObject) {
            try f.client.library.closeSession(mine)
        }
    }

    @Test func aClientLeavingEndsItsSessions() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let item = try f.client.quickItem(attributes: ["leave": "1"], secret: "kept")
        let leaving = try f.newClient()
        let session = try leaving.library.openSession()
        #expect(try leaving.secretBytes(of: item, session: session) == Array("kept".utf8))
        let sessionName = try #require(session.path.lastElement)
        #expect(try f.client.introspect(SecretPath.sessions).contains("name=\"\(sessionName)\""))
        // While it lives, another client's Close is refused (UnknownMethod), not "no object".
        expectDBusError(DBusError.Name.unknownMethod) { try f.client.library.closeSession(session) }

        // The daemon notices the name vanish and drops the session: now there is no object.
        #expect(try f.client.close(leaving), "the leaving client never left the bus")
        expectDBusError(DBusError.Name.unknownObject) { try f.client.library.closeSession(session) }
        expectDBusError(SecretServiceError.Name.noSession) { _ = try f.client.secretBytes(of: item, session: session) }
        // The daemon still serves.
        #expect(try f.client.secretBytes(of: item, session: try f.client.library.openSession()) == Array("kept".utf8))
    }
}

enum DHTestValues {
    /// The 1024-bit MODP prime of RFC 2409.
    static let prime: [UInt8] = Hex.decode("""
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74\
        020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437\
        4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED\
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """)!
}
