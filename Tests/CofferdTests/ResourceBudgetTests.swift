import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// What one client can take is bounded, and an exhausted budget is a clear error for that
/// client while every other client keeps being served; big reads return every secret.
@Suite(.timeLimit(.minutes(10))) struct ResourceBudgetTests {
    static let limitsExceeded = SecretServiceError.Name.limitsExceeded

    /// The reproduction of a daemon abort: one client fills the in-memory session collection;
    /// it gets LimitsExceeded at its share, while searches, reads and another client's stores
    /// keep working (before, libgcrypt's secure pool ran dry and the next search aborted cofferd).
    @Test func fillingTheSessionCollectionStopsAtTheClientsShare() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let hog = f.client!
        let session = try hog.library.openSession(.plain)
        let big = [UInt8](repeating: 0x41, count: 256 << 10)
        var stored: [ObjectPath] = []
        var refusal: DBusError?
        for index in 0..<200 {
            do {
                stored.append(try hog.createItem(in: SecretPath.sessionCollection, label: "fill \(index)",
                                                 attributes: ["fill": "\(index)"], secret: big, session: session))
            } catch let error as DBusError {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "200 items of 256 KiB were all accepted")
        #expect(error.name == Self.limitsExceeded)
        #expect(error.message.contains("session collection"), "\(error)")
        #expect((50...64).contains(stored.count), "\(stored.count) items fit a 16 MiB share")

        // The daemon serves everyone: searches, reads of all the hog's secrets at once (16 MiB,
        // four times the secure pool), and another client's stores.
        let other = try f.newClient()
        let otherSession = try other.library.openSession()
        #expect(try other.library.search(["fill": "0"]).unlocked == [stored[0]])
        let secrets = try other.secrets(of: stored, session: otherSession)
        #expect(secrets.count == stored.count)
        #expect(secrets.values.allSatisfy { $0 == big })
        let mine = try other.createItem(in: SecretPath.sessionCollection, label: "mine", attributes: ["who": "other"],
                                        secret: "still room", session: otherSession)
        #expect(try other.secretBytes(of: mine, session: otherSession) == Array("still room".utf8))

        // Deleting gives the share back.
        try hog.call(ItemInterface.Delete.self, on: stored[0], arguments: [])
        try hog.createItem(in: SecretPath.sessionCollection, label: "again", attributes: ["fill": "again"], secret: big, session: session)
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    /// GetSecrets returns every secret it was asked for, however many: 600 of 8,000 bytes and
    /// 20 of 256 KiB (both more than the secure pool holds at once).
    @Test func getSecretsReturnsEverySecret() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        var expected: [ObjectPath: [UInt8]] = [:]
        for index in 0..<600 {
            let secret = (0..<8000).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            let path = try c.createItem(label: "many \(index)", attributes: ["batch": "many", "n": "\(index)"],
                                        secret: secret, contentType: "application/octet-stream", session: session)
            expected[path] = secret
        }
        let many = try c.secrets(of: Array(expected.keys), session: session)
        #expect(many.count == 600)
        #expect(many == expected)

        var large: [ObjectPath: [UInt8]] = [:]
        for index in 0..<20 {
            let secret = [UInt8](repeating: UInt8(index), count: 256 << 10)
            large[try c.createItem(label: "large \(index)", attributes: ["batch": "large", "n": "\(index)"],
                                   secret: secret, contentType: "application/octet-stream", session: session)] = secret
        }
        #expect(try c.secrets(of: Array(large.keys), session: session) == large)
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    /// A reply that would pass what one D-Bus message may carry is refused with a clear error,
    /// not sent (a bus disconnects a sender that passes its message limit).
    @Test func getSecretsRefusesAReplyTooLargeForOneMessage() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession(.plain)
        let secret = [UInt8](repeating: 0x5A, count: 256 << 10)
        let items = try (0..<100).map { index in
            try c.createItem(label: "huge \(index)", attributes: ["n": "\(index)"], secret: secret, session: session)
        }
        let error = expectDBusError(Self.limitsExceeded) { _ = try c.secrets(of: items, session: session) }
        #expect(error?.message.contains("ask for fewer items") == true, "\(String(describing: error))")
        #expect(try c.secrets(of: Array(items.prefix(40)), session: session).count == 40)
    }

    /// Many clients holding many DH sessions (2,000) leave room for everyone's next one: an
    /// idle session holds a 16-byte key, not a libgcrypt handle.
    @Test func manyDHSessionsDoNotBlockNewOnes() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let item = try f.client.quickItem(attributes: ["dh": "many"], secret: "reachable")
        let clients = try (0..<10).map { _ in try f.newClient() }
        var held: [ClientSession] = []
        for client in clients {
            for _ in 0..<200 { held.append(try client.library.openSession()) }
        }
        let latecomer = try f.newClient()
        let session = try latecomer.library.openSession()
        #expect(try latecomer.secretBytes(of: item, session: session) == Array("reachable".utf8))
        #expect(try clients[0].secretBytes(of: item, session: held[0]) == Array("reachable".utf8))
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    /// With little locked memory, running it out gives LimitsExceeded, never libgcrypt's abort;
    /// what needs no secure memory goes on working, and closing sessions makes room again.
    @Test func exhaustedSecureMemoryIsAnErrorNotAnAbort() throws {
        let f = try DaemonFixture(daemonOptions: ["--secure-memory-kib", "64"])
        defer { f.shutdown() }
        let c = f.client!
        // Four clients, so that none reaches the 1,024 sessions after which its oldest close.
        let clients = [c] + (try (0..<3).map { _ in try f.newClient() })
        let plain = try c.library.openSession(.plain)
        let item = try c.createItem(label: "small", attributes: ["pool": "tiny"], secret: "fits", session: plain)
        var sessions: [(TestClient, ClientSession)] = []
        var refusal: DBusError?
        for index in 0..<4000 {
            let client = clients[index % clients.count]
            do {
                sessions.append((client, try client.library.openSession()))
            } catch let error as DBusError {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "4,000 DH sessions fit in 128 KiB for secrets")
        #expect(error.name == Self.limitsExceeded)
        #expect(error.message.contains("secure memory"), "\(error)")
        // Whatever else is asked now fails cleanly or works; the daemon stays up.
        for _ in 0..<20 {
            _ = try? c.library.openSession()
            _ = try? c.secrets(of: [item], session: plain)
            _ = try? c.createItem(label: "more", attributes: ["pool": "more"], secret: "x", session: plain)
        }
        #expect(try c.library.search(["pool": "tiny"]).unlocked == [item])
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
        for (client, session) in sessions { try client.library.closeSession(session) }
        let again = try c.library.openSession()
        #expect(try c.secretBytes(of: item, session: again) == Array("fits".utf8))
        #expect(!f.daemonLog.contains("Fatal error"), "\(f.daemonLog)")
    }
}
