import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// What is decided for arguments gnome-keyring refuses and we once let through: CreateItem
/// takes only the Item properties it knows, each as one variant of its exact type; the fixed
/// aliases `login` and `session` cannot be re-pointed, and `default` may not name the
/// in-memory session collection.
@Suite(.timeLimit(.minutes(5))) struct StrictArgumentTests {
    func createItem(_ c: TestClient, _ properties: [String: DBusValue], session: ClientSession) throws {
        _ = try c.call(CollectionInterface.CreateItem.self, on: SecretPath.login,
                       arguments: [.variantDictionary(properties), try session.encode(SecureBytes("s")).dbusValue, .boolean(false)])
    }

    @Test func createItemRefusesUnknownPropertiesAndExtraVariants() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession(.plain)
        let unknown = expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [ItemProperties.labelKey: .string("x"), "\(ItemInterface.name).Colour": .string("red")], session: session)
        }
        #expect(unknown?.message.contains("Colour") == true, "\(String(describing: unknown))")
        let wrapped = expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [ItemProperties.labelKey: .string("x"), ItemProperties.attributesKey: .variant(.stringDictionary(["a": "b"]))], session: session)
        }
        #expect(wrapped?.message.contains("a{ss}") == true, "\(String(describing: wrapped))")
        expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [ItemProperties.labelKey: .uint32(7)], session: session)
        }
        #expect(try c.library.search([:]).unlocked.isEmpty, "a refused CreateItem stored something")
        // What gnome-keyring accepts still works, Type and the ignored Created included.
        try createItem(c, [ItemProperties.labelKey: .string("ok"), ItemProperties.attributesKey: .stringDictionary(["a": "b"]),
                           ItemProperties.typeKey: .string("org.example.Schema"), "\(ItemInterface.name).\(ItemInterface.Property.created)": .uint64(1)],
                       session: session)
        #expect(try c.library.search(["a": "b"]).unlocked.count == 1)
    }

    @Test func fixedAliasesStayAndDefaultIsNeverTheSessionCollection() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        for (name, target) in [("login", SecretPath.sessionCollection), ("session", SecretPath.login), ("default", SecretPath.sessionCollection)] {
            expectDBusError(DBusError.Name.invalidArgs) {
                try c.library.setAlias(name, to: target)
            }
        }
        #expect(try c.library.readAlias("login") == SecretPath.login)
        #expect(try c.library.readAlias("session") == SecretPath.sessionCollection)
        #expect(try c.library.readAlias("default") == SecretPath.login)
    }
}
