import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Testing

/// Limits that keep one client from exhausting the daemon: sessions and pending prompts per
/// client, one password dialog at a time, secret sizes checked before secure memory is used,
/// and exactly one path per collection.
@Suite(.timeLimit(.minutes(3))) struct HardeningTests {
    // MARK: Canonical paths

    @Test func collectionsHaveOnlyTheirCanonicalPath() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let canonical: ObjectPath = "/org/freedesktop/secrets/collection/my_5fkeys"
        #expect(try c.createWithMasterPassword(label: "My Keys", password: "pw", session: session) == canonical)
        let item = try c.createItem(in: canonical, label: "k", attributes: ["canon": "1"], secret: "s", session: session)
        #expect(try c.get(canonical, SS.collectionInterface, "Label") == .string("My Keys"))
        try c.service("SetAlias", [.string("keys"), .objectPath(canonical)])
        #expect(try c.get("/org/freedesktop/secrets/aliases/keys", SS.collectionInterface, "Label") == .string("My Keys"))

        let itemNumber = try #require(item.lastElement)
        let spellings: [ObjectPath] = [
            "/org/freedesktop/secrets/collection/my_5Fkeys",       // upper-case hex
            "/org/freedesktop/secrets/collection/_6dy_5fkeys",     // an escaped letter
            "/org/freedesktop/secrets/collection/l_6fgin",
            "/org/freedesktop/secrets/collection/login_",          // a bare "_" is "_5f"
            "/org/freedesktop/secrets/aliases/_6beys",
            "/org/freedesktop/secrets/aliases/d_65fault",
        ]
        for path in spellings {
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                _ = try c.getAll(path, SS.collectionInterface)
            }
            let itemPath = try ObjectPath(path.rawValue + "/" + itemNumber)
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                _ = try c.getSecret(itemPath, session: session)
            }
            expectDBusError(ErrorName.noSuchObject) {
                try c.service("SetAlias", [.string("other"), .objectPath(path)])
            }
            // Lock and Unlock skip what they cannot resolve.
            let locked = try c.service("Lock", [.objectPathArray([path])])
            #expect(locked.first == .objectPathArray([]), "\(path): \(locked)")
            let unlocked = try c.service("Unlock", [.objectPathArray([path])])
            #expect(unlocked == [.objectPathArray([]), .objectPath(SS.none)], "\(path): \(unlocked)")
        }
        #expect(try c.isLocked(canonical) == false)
        #expect(try c.isLocked(SS.login) == false)
        #expect(try c.getSecret(item, session: session) == Array("s".utf8))
        #expect(try c.readAlias("other") == SS.none)
    }
}
