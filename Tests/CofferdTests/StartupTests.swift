import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// `--unlock` and starting without a login collection.
@Suite(.timeLimit(.minutes(10))) struct StartupTests {
    // How --unlock reads its password: UnlockNewlineTests.

    @Test func emptyStdinCreatesNothing() throws {
        let f = try DaemonFixture(password: "")
        defer { f.shutdown() }
        let c = f.client!
        #expect(try c.library.collections() == [SecretPath.sessionCollection])
        #expect(try c.library.readAlias("default") == nil)
        expectDBusError(DBusError.Name.unknownObject, SecretServiceError.Name.noSuchObject) { _ = try c.library.properties(of: CollectionInterface.name, on: SecretPath.defaultAlias) }
        // libsecret then creates the default collection itself; with no answer, the store fails cleanly.
        let result = try f.secretTool(["store", "--label=x", "k", "v"], stdin: "s")
        #expect(result.exitCode != 0, "\(result)")
        #expect(try c.library.collections() == [SecretPath.sessionCollection])
        #expect(f.daemonIsRunning)
    }

    @Test func withoutUnlockOnAnEmptyStoreClientsCreateTheDefaultCollection() throws {
        let f = try DaemonFixture(unlock: false, pinentry: ["first password"])
        defer { f.shutdown() }
        let c = f.client!
        #expect(try c.library.collections() == [SecretPath.sessionCollection])
        #expect(try c.library.readAlias("default") == nil)
        try f.store(label: "first", ["k": "v"], secret: Array("stored".utf8))
        let def = try #require(try c.library.readAlias("default"))
        #expect(try c.library.collection(def).label == "Default keyring")
        #expect(try f.lookup(["k": "v"]).stdout == "stored")

        // It persists, alias included, and its password is the one typed.
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: false)
        #expect(try f.client.library.readAlias("default") == def)
        #expect(try f.client.isLocked(def))
        try f.client.library.unlock(def, password: SecureBytes("first password"), session: try f.client.library.openSession())
        #expect(try f.lookup(["k": "v"]).stdout == "stored")
    }
}
