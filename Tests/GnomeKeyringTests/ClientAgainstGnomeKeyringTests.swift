import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// SecretServiceClient against the real gnome-keyring: the library works with any provider,
/// not just cofferd (ClientLibraryTests run the same calls against cofferd).
@Suite(.timeLimit(.minutes(5)), .enabled(if: GnomeKeyringDaemon.executable != nil,
                                         "gnome-keyring-daemon is not installed (scripts/setup installs it)"))
struct ClientAgainstGnomeKeyringTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    @Test(arguments: [SessionSecurity.encrypted, .plain])
    func storeLookUpChangeAndDelete(security: SessionSecurity) throws {
        let keyring = try GnomeKeyringDaemon(password: "gk password")
        defer { keyring.remove() }
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        let session = try client.openSession(security)
        #expect(session.isEncrypted == (security == .encrypted))

        let login = try #require(try client.readAlias("default"))
        let item = try client.createItem(in: login, label: "Git", attributes: ["service": "git", "user": "ann"],
                                         secret: try Self.bytes("hunter2"), session: session)
        #expect(try client.search(["service": "git"]).unlocked == [item])
        #expect(try client.search(in: login, ["user": "ann"]) == [item])
        #expect(try client.secret(of: item, session: session).bytes == (try Self.bytes("hunter2")))
        try client.setSecret(of: item, to: try Self.bytes("hunter3"), session: session)
        try client.setLabel(ofItem: item, to: "Git (ann)")
        #expect(try client.item(item).label == "Git (ann)")
        var read = 0
        try client.forEachSecret(of: [item], session: session) { _, secret in
            #expect(secret.bytes == (try? Self.bytes("hunter3")))
            read += 1
        }
        #expect(read == 1)
        try client.deleteItem(item)
        #expect(try client.search(["service": "git"]).unlocked.isEmpty)
    }

    /// Collections made, unlocked and re-keyed through gnome-keyring's password interface.
    @Test func passwordsThroughTheGnomeKeyringInterface() throws {
        let keyring = try GnomeKeyringDaemon(password: "gk password")
        defer { keyring.remove() }
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        #expect(client.offersPasswordInterface())
        let session = try client.openSession()
        let other = try client.createCollection(label: "Other", password: try Self.bytes("one"), session: session)
        #expect(try client.collections().contains(other))
        #expect(try client.collection(other).label == "Other")
        _ = try client.lock([other])
        #expect(try client.collection(other).isLocked)
        #expect(throws: DBusError.self) { try client.unlock(other, password: try Self.bytes("wrong"), session: session) }
        try client.unlock(other, password: try Self.bytes("one"), session: session)
        #expect(try !client.collection(other).isLocked)
        try client.changePassword(of: other, from: try Self.bytes("one"), to: try Self.bytes("two"), session: session)
        _ = try client.lock([other])
        try client.unlock(other, password: try Self.bytes("two"), session: session)
        try client.deleteCollection(other)
        #expect(try !client.collections().contains(other))
    }
}
