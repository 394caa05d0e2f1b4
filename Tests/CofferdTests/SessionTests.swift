import CofferCrypto
import DBusKit
import Foundation
import SystemKit
import Testing

/// OpenSession, the transfer algorithms and session ownership.
@Suite(.timeLimit(.minutes(10))) struct SessionTests {
    @Test func plainSessionRoundTripsBothWays() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let reply = try f.client.service("OpenSession", [.string("plain"), .variant(.string(""))])
        try #require(reply.count == 2)
        #expect(reply[0] == .variant(.string("")), "plain output is a variant of empty s")
        let path = try #require(reply[1].objectPath)
        #expect(path.rawValue.hasPrefix("/org/freedesktop/secrets/session/"))
        let session = ClientSession(path: path, key: nil, sharedSecretHadLeadingZero: false)

        let secret: [UInt8] = [0, 1, 2, 0xff, 0x0a] + Array("plain secret".utf8)
        let item = try f.client.createItem(label: "plain", attributes: ["via": "plain"], secret: secret,
                                           contentType: "application/octet-stream", session: session)
        let got = try f.client.decode(try #require(try f.client.call(item, SS.itemInterface, "GetSecret",
                                                                     [.objectPath(path)]).first), session: session)
        #expect(got.bytes == secret)
        #expect(got.contentType == "application/octet-stream")
        #expect(try f.client.getSecrets([item], session: session) == [item: secret])

        // An empty secret travels too.
        try f.client.call(item, SS.itemInterface, "SetSecret", [try f.client.encode([], session: session)])
        #expect(try f.client.getSecret(item, session: session) == [])
    }

    @Test func dhSessionRoundTripsBothWays() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let session = try f.client.openDH()
        let plain = try f.client.openPlain()
        for secret in [[], Array("x".utf8), Array("exactly 16 bytes".utf8), (0..<1000).map { UInt8($0 % 256) }] {
            // Client -> server (CreateItem), checked through a plain session and back through DH.
            let item = try f.client.createItem(label: "dh \(secret.count)", attributes: ["len": "\(secret.count)"],
                                               secret: secret, session: session)
            #expect(try f.client.getSecret(item, session: plain) == secret)
            #expect(try f.client.getSecret(item, session: session) == secret)
            #expect(try f.client.getSecrets([item], session: session) == [item: secret])
        }
        // Each secret gets a fresh IV.
        let item = try #require(try f.client.items(of: SS.login).first)
        let a = try f.client.call(item, SS.itemInterface, "GetSecret", [.objectPath(session.path)])
        let b = try f.client.call(item, SS.itemInterface, "GetSecret", [.objectPath(session.path)])
        #expect(a[0].structureFields?[1] != b[0].structureFields?[1], "IV reused")
    }

    /// Many DH sessions, alternating how the client encodes its public key, each checked in
    /// both directions against a plain session. With enough of them the shared secret S has a
    /// leading zero byte (about 1 in 256), where an unpadded S would give a different key.
    @Test func manyDHSessionsAllAgreeOnTheKey() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let plain = try f.client.openPlain()
        let item = try f.client.createItem(label: "rotating", attributes: ["dh": "many"], secret: "start", session: plain)
        var leadingZeros = 0
        var sessions = 0
        let encodings: [PublicKeyEncoding] = [.padded, .minimal, .extraZeros]
        while sessions < 300 || (leadingZeros == 0 && sessions < 3000) {
            let session = try f.client.openDH(encoding: encodings[sessions % 3])
            sessions += 1
            if session.sharedSecretHadLeadingZero { leadingZeros += 1 }
            let secret = Array("secret number \(sessions) ".utf8) + Random.bytes(sessions % 40)
            try f.client.call(item, SS.itemInterface, "SetSecret", [try f.client.encode(secret, session: session)])
            let viaPlain = try f.client.getSecret(item, session: plain)
            let viaDH = try f.client.getSecret(item, session: session)
            guard viaPlain == secret, viaDH == secret else {
                Issue.record("session \(sessions) (leading zero: \(session.sharedSecretHadLeadingZero)) disagrees")
                break
            }
            try f.client.closeSession(session)
        }
        #expect(leadingZeros > 0, "no session had a shared secret with a leading zero in \(sessions) tries")
        #expect(f.daemonIsRunning)
    }

    @Test func unknownAlgorithmAndWrongInputTypes() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        expectDBusError(ErrorName.notSupported) {
            try f.client.service("OpenSession", [.string("rot13"), .variant(.string(""))])
        }
        expectDBusError(ErrorName.notSupported) {
            try f.client.service("OpenSession", [.string("dh-ietf2048-sha256-aes128-cbc-pkcs7"), .variant(.bytes([2]))])
        }
        expectDBusError(ErrorName.invalidArgs) {
            try f.client.service("OpenSession", [.string("plain"), .variant(.bytes([]))])
        }
        expectDBusError(ErrorName.invalidArgs) {
            try f.client.service("OpenSession", [.string(SS.dh), .variant(.string(""))])
        }
        expectDBusError(ErrorName.invalidArgs) {
            try f.client.service("OpenSession", [.string(SS.dh), .variant(.uint32(2))])
        }
        // Degenerate public keys: empty, 1, p-1, p, and longer than the prime.
        let prime: [UInt8] = DHTestValues.prime
        var primeMinusOne = prime
        primeMinusOne[127] -= 1
        for bad in [[], [1], [0, 0, 1], primeMinusOne, prime, [UInt8](repeating: 0xff, count: 129)] {
            expectDBusError(ErrorName.invalidArgs) {
                try f.client.service("OpenSession", [.string(SS.dh), .variant(.bytes(bad))])
            }
        }
        // A good session still opens afterwards.
        _ = try f.client.openDH()
    }

    @Test func sessionsBelongToTheirClient() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let mine = try f.client.openDH()
        let item = try f.client.createItem(label: "owned", attributes: ["own": "1"], secret: "mine", session: mine)
        let other = try f.newClient()
        let theirs = try other.openDH()

        // Using another client's session: NoSession everywhere a session is named.
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecret(item, session: theirs) }
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecrets([item], session: theirs) }
        expectDBusError(ErrorName.noSession) {
            try f.client.createItem(label: "x", attributes: ["own": "2"], secret: "x", session: theirs)
        }
        expectDBusError(ErrorName.noSession) {
            try f.client.call(item, SS.itemInterface, "SetSecret", [try f.client.encode("x", session: theirs)])
        }
        // Closing it is not for us either.
        expectDBusError(ErrorName.unknownMethod, ErrorName.unknownObject) { try f.client.closeSession(theirs) }
        #expect(try other.getSecrets([item], session: theirs) == [item: Array("mine".utf8)])

        // Sessions that never existed.
        let bogus = ClientSession(path: "/org/freedesktop/secrets/session/s999999", key: nil, sharedSecretHadLeadingZero: false)
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecret(item, session: bogus) }
        let notASession = ClientSession(path: SS.login, key: nil, sharedSecretHadLeadingZero: false)
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecrets([item], session: notASession) }

        // Close ends it: further use is NoSession, the object is gone.
        try f.client.closeSession(mine)
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecret(item, session: mine) }
        expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
            try f.client.closeSession(mine)
        }
    }

    @Test func aClientLeavingEndsItsSessions() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let item = try f.client.quickItem(attributes: ["leave": "1"], secret: "kept")
        let leaving = try f.newClient()
        let session = try leaving.openDH()
        #expect(try leaving.getSecret(item, session: session) == Array("kept".utf8))
        let sessionName = try #require(session.path.lastElement)
        #expect(try f.client.introspect("/org/freedesktop/secrets/session").contains("name=\"\(sessionName)\""))
        // While it lives, another client's Close is refused (UnknownMethod), not "no object".
        expectDBusError(ErrorName.unknownMethod) { try f.client.closeSession(session) }

        leaving.close()
        // The daemon notices the name vanish and drops the session: now there is no object.
        let gone = eventually {
            do { try f.client.closeSession(session); return false } catch let e as DBusError {
                return e.name == ErrorName.unknownObject
            } catch { return false }
        }
        #expect(gone, "session \(session.path) outlived its client")
        expectDBusError(ErrorName.noSession) { _ = try f.client.getSecret(item, session: session) }
        // The daemon still serves.
        #expect(try f.client.getSecret(item, session: try f.client.openDH()) == Array("kept".utf8))
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
