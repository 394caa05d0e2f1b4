import CofferTestSupport
import DBusKit
import Foundation
import Testing

/// `--unlock` and starting without a login collection.
@Suite(.timeLimit(.minutes(10))) struct StartupTests {
    // How --unlock reads its password: UnlockNewlineTests.

    @Test func emptyStdinCreatesNothing() throws {
        let f = try DaemonFixture(password: "")
        defer { f.shutdown() }
        let c = f.client!
        #expect(try c.collections() == [SS.sessionCollection])
        #expect(try c.readAlias("default") == SS.none)
        expectDBusError(ErrorName.unknownObject, ErrorName.noSuchObject) { _ = try c.getAll(SS.defaultAlias, SS.collectionInterface) }
        // libsecret then creates the default collection itself; with no answer, the store fails cleanly.
        let result = try f.secretTool(["store", "--label=x", "k", "v"], stdin: "s")
        #expect(result.exitCode != 0, "\(result)")
        #expect(try c.collections() == [SS.sessionCollection])
        #expect(f.daemonIsRunning)
    }

    @Test func withoutUnlockOnAnEmptyStoreClientsCreateTheDefaultCollection() throws {
        let f = try DaemonFixture(unlock: false, pinentry: ["first password"])
        defer { f.shutdown() }
        let c = f.client!
        #expect(try c.collections() == [SS.sessionCollection])
        #expect(try c.readAlias("default") == SS.none)
        try f.store(label: "first", ["k": "v"], secret: Array("stored".utf8))
        let def = try c.readAlias("default")
        #expect(def != SS.none)
        #expect(try c.get(def, SS.collectionInterface, "Label") == .string("Default keyring"))
        #expect(try f.lookup(["k": "v"]).stdout == "stored")

        // It persists, alias included, and its password is the one typed.
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: false)
        #expect(try f.client.readAlias("default") == def)
        #expect(try f.client.isLocked(def))
        try f.client.unlockWithMasterPassword(def, password: "first password", session: try f.client.openDH())
        #expect(try f.lookup(["k": "v"]).stdout == "stored")
    }
}
