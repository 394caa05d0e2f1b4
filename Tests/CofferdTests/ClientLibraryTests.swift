import Synchronization
import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
import Dispatch
@_spi(KeyAgreement) import SecretServiceClient
import SecretServiceProtocol
import Testing

/// SecretServiceClient against the real cofferd: everything a client library must do, with
/// both kinds of session.
@Suite(.timeLimit(.minutes(5)), .enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
struct ClientLibraryTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    static func client(_ f: DaemonFixture) throws -> SecretServiceClient {
        SecretServiceClient(connection: try DBusConnection(address: f.bus.address))
    }

    @Test(arguments: [SessionSecurity.encrypted, .plain])
    func storeLookUpChangeAndDelete(security: SessionSecurity) throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let client = try Self.client(f)
        defer { client.close() }
        let session = try client.openSession(security)
        #expect(session.isEncrypted == (security == .encrypted))

        let login = try #require(try client.readAlias("default"))
        #expect(login == SecretPath.collection(named: "login"))
        let item = try client.createItem(in: login, label: "Git", attributes: ["service": "git", "user": "ann"],
                                         secret: try Self.bytes("hunter2"), contentType: "text/x-token", session: session)
        #expect(try client.search(["service": "git"]).unlocked == [item])
        #expect(try client.search(in: login, ["user": "ann"]) == [item])
        let secret = try client.secret(of: item, session: session)
        #expect(secret.bytes == (try Self.bytes("hunter2")))
        #expect(secret.contentType == "text/x-token")

        try client.setSecret(of: item, to: try Self.bytes("hunter3"), session: session)
        try client.setLabel(ofItem: item, to: "Git (ann)")
        try client.setAttributes(of: item, to: ["service": "git", "user": "bob"])
        let snapshot = try client.item(item)
        #expect(snapshot.label == "Git (ann)" && snapshot.attributes == ["service": "git", "user": "bob"] && !snapshot.isLocked)
        #expect(try client.secret(of: item, session: session).bytes == (try Self.bytes("hunter3")))

        try client.deleteItem(item)
        #expect(try client.search(["service": "git"]).unlocked.isEmpty)
        #expect(throws: DBusError.self) { try client.secret(of: item, session: session) }
        try client.closeSession(session)
        #expect(throws: DBusError.self) { try client.secret(of: item, session: session) }
    }

    /// 100 items read back in GetSecrets batches; the order and every secret are kept.
    @Test func manySecretsInBatches() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let client = try Self.client(f)
        defer { client.close() }
        let session = try client.openSession()
        let login = SecretPath.collection(named: "login")
        var items: [ObjectPath] = []
        for n in 0..<100 {
            items.append(try client.createItem(in: login, label: "n\(n)", attributes: ["n": "\(n)"],
                                               secret: try Self.bytes("secret \(n)"), session: session))
        }
        var seen = 0
        try client.forEachSecret(of: items, session: session) { position, secret in
            let expected = try Self.bytes("secret \(position)")
            #expect(secret.bytes == expected)
            seen += 1
        }
        #expect(seen == 100)
        #expect(try client.collection(login).items.count == 100)
    }

    /// The loop thread runs only while a prompt is awaited: calls from several threads at once,
    /// before, during and after it, all get their replies, and the prompt completes.
    @Test func callsFromManyThreadsWhileAPromptIsAwaited() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 0.5 \(DaemonFixture.loginPassword)"])
        defer { f.shutdown() }
        let client = try Self.client(f)
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        let session = try client.openSession()
        let item = try client.createItem(in: login, label: "t", attributes: ["t": "1"], secret: try Self.bytes("x"), session: session)
        #expect(try client.lock([login]) == [login])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            do {
                if thread == 0 {
                    let unlocked = try client.unlock([login])
                    if unlocked != [login] { failures.withLock { $0.append("unlock returned \(unlocked)") } }
                    return
                }
                for _ in 0..<100 {
                    let found = try client.search(["t": "1"])
                    if found.unlocked + found.locked != [item] { failures.withLock { $0.append("search found \(found)") } }
                }
            } catch {
                failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")
        #expect(try client.secret(of: item, session: session).bytes == (try Self.bytes("x")))
    }

    /// A DH session opened with the public key sent as the provider must also accept it:
    /// without its leading zeros, or with more of them. The shared secret is the one the key
    /// came from.
    @Test func encryptedSessionsForOtherPublicKeyEncodings() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let client = try Self.client(f)
        defer { client.close() }
        let plain = try client.openSession(.plain)
        let item = try client.createItem(in: SecretPath.collection(named: "login"), label: "k", attributes: ["k": "1"],
                                         secret: try Self.bytes("start"), session: plain)
        for encode in [{ (key: [UInt8]) in Array(key.drop { $0 == 0 }) }, { [0, 0] + $0 }] {
            let pair = try DHKeyPair()
            let (session, shared) = try ClientSession.openEncrypted(with: client, keyPair: pair, sending: encode(pair.publicKey))
            #expect(session.isEncrypted && shared.count == DHKeyPair.primeLength)
            try client.setSecret(of: item, to: try Self.bytes("via \(session.path)"), session: session)
            #expect(try client.secret(of: item, session: plain).bytes == (try Self.bytes("via \(session.path)")))
            #expect(try client.secret(of: item, session: session).bytes == (try Self.bytes("via \(session.path)")))
        }
    }

    /// Unlock through a prompt, a dismissed prompt, and collections made and deleted through
    /// the prompt and through gnome-keyring's password interface.
    @Test func promptsAndPasswords() throws {
        let f = try DaemonFixture(pinentry: ["CANCEL", DaemonFixture.loginPassword, "new one", "new one"])
        defer { f.shutdown() }
        let client = try Self.client(f)
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        #expect(try client.lock([login]) == [login])
        #expect(try client.collection(login).isLocked)
        #expect(throws: PromptError.dismissed) { try client.unlock([login]) }
        #expect(try client.unlock([login]) == [login])
        #expect(try !client.collection(login).isLocked)

        let made = try client.createCollection(label: "Work")
        #expect(try client.collection(made).label == "Work")
        #expect(try client.collections().contains(made))
        try client.deleteCollection(made)
        #expect(try !client.collections().contains(made))

        #expect(client.offersPasswordInterface())
        let session = try client.openSession()
        let other = try client.createCollection(label: "Other", password: try Self.bytes("pw one"), session: session)
        try client.setAlias("mine", to: other)
        #expect(try client.readAlias("mine") == other)
        _ = try client.lock([other])
        #expect(throws: DBusError.self) { try client.unlock(other, password: try Self.bytes("wrong"), session: session) }
        try client.unlock(other, password: try Self.bytes("pw one"), session: session)
        try client.changePassword(of: other, from: try Self.bytes("pw one"), to: try Self.bytes("pw two"), session: session)
        _ = try client.lock([other])
        try client.unlock(other, password: try Self.bytes("pw two"), session: session)
        try client.setAlias("mine", to: nil)
        #expect(try client.readAlias("mine") == nil)
    }
}

/// Secrets that do not fit this process's secure memory in one batch are read in smaller ones.
@Suite(.timeLimit(.minutes(5))) struct ClientBatchTests {
    @Test func largeSecretsAreReadInHalvedBatches() throws {
        Crypto.initialize()
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let client = SecretServiceClient(connection: try DBusConnection(address: f.bus.address))
        defer { client.close() }
        let session = try client.openSession(.plain)
        let login = SecretPath.collection(named: "login")
        // 24 × 200 KiB: 4.8 MB in one reply, more than the 4 MiB secure pool of this process.
        var items: [ObjectPath] = []
        for n in 0..<24 {
            let secret = try SecureBytes([UInt8](repeating: UInt8(n), count: 200 << 10))
            items.append(try client.createItem(in: login, label: "big \(n)", attributes: ["big": "\(n)"], secret: secret, session: session))
        }
        var read: [Int] = []
        try client.forEachSecret(of: items, session: session) { position, secret in
            #expect(secret.bytes.count == 200 << 10 && secret.bytes[0] == UInt8(position) && secret.bytes[(200 << 10) - 1] == UInt8(position))
            read.append(position)
        }
        #expect(read == Array(0..<24))
    }
}
