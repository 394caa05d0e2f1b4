import CofferTestSupport
import DBusKit
import Foundation
import Testing

/// What is decided for arguments gnome-keyring refuses and we once let through: CreateItem
/// takes only the Item properties it knows, each as one variant of its exact type; the fixed
/// aliases `login` and `session` cannot be re-pointed, and `default` may not name the
/// in-memory session collection.
@Suite(.timeLimit(.minutes(5))) struct StrictArgumentTests {
    func createItem(_ c: SecretClient, _ properties: [String: DBusValue], session: ClientSession) throws {
        _ = try c.call(SS.login, SS.collectionInterface, "CreateItem",
                       [.variantDictionary(properties), try c.encode("s", session: session), .boolean(false)])
    }

    @Test func createItemRefusesUnknownPropertiesAndExtraVariants() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openPlain()
        let unknown = expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [SS.itemLabel: .string("x"), "org.freedesktop.Secret.Item.Colour": .string("red")], session: session)
        }
        #expect(unknown?.message.contains("Colour") == true, "\(String(describing: unknown))")
        let wrapped = expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [SS.itemLabel: .string("x"), SS.itemAttributes: .variant(.stringDictionary(["a": "b"]))], session: session)
        }
        #expect(wrapped?.message.contains("a{ss}") == true, "\(String(describing: wrapped))")
        expectDBusError(DBusError.Name.invalidArgs) {
            try createItem(c, [SS.itemLabel: .uint32(7)], session: session)
        }
        #expect(try c.searchItems([:]).unlocked.isEmpty, "a refused CreateItem stored something")
        // What gnome-keyring accepts still works, Type and the ignored Created included.
        try createItem(c, [SS.itemLabel: .string("ok"), SS.itemAttributes: .stringDictionary(["a": "b"]),
                           SS.itemType: .string("org.example.Schema"), "org.freedesktop.Secret.Item.Created": .uint64(1)],
                       session: session)
        #expect(try c.searchItems(["a": "b"]).unlocked.count == 1)
    }

    @Test func fixedAliasesStayAndDefaultIsNeverTheSessionCollection() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        for (name, target) in [("login", SS.sessionCollection), ("session", SS.login), ("default", SS.sessionCollection)] {
            expectDBusError(DBusError.Name.invalidArgs) {
                try c.service("SetAlias", [.string(name), .objectPath(target)])
            }
        }
        #expect(try c.readAlias("login") == SS.login)
        #expect(try c.readAlias("session") == SS.sessionCollection)
        #expect(try c.readAlias("default") == SS.login)
    }
}
