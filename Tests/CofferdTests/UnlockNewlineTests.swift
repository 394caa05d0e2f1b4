import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// One rule for passwords on stdin, in cofferd as in coffer: a single trailing newline is not
/// part of the password.
@Suite(.timeLimit(.minutes(5))) struct UnlockNewlineTests {
    @Test func aTrailingNewlineIsNotPartOfThePassword() throws {
        let f = try DaemonFixture(password: "pw one\n")
        defer { f.shutdown() }
        _ = f.stopDaemon()
        // The password without the newline opens it (a wrong one keeps cofferd from starting).
        try f.startDaemon(unlock: true, password: "pw one")
        _ = f.stopDaemon()
        try f.startDaemon(unlock: true, password: "pw one\r\n")
        _ = f.stopDaemon()
        #expect(throws: (any Error).self) { try f.startDaemon(unlock: true, password: "pw one\n\n") }
    }

    /// A login made by an older cofferd, whose password kept the newline, still opens, and is
    /// re-keyed so that the password without the newline opens it from then on.
    @Test func aPasswordStoredWithItsNewlineIsMigrated() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        _ = f.stopDaemon()
        let store = Keychain(provider: try FileStore(directory: f.dataDir, kdf: .testing), sessionCollection: false)
        try store.createCollection(label: "Login", id: .login, password: try SecureBytes(Array("legacy\n".utf8)))

        try f.startDaemon(unlock: true, password: "legacy\n")
        #expect(eventually { f.daemonLog.contains("trailing newline") }, "\(f.daemonLog)")
        _ = f.stopDaemon()
        try f.startDaemon(unlock: true, password: "legacy")
        #expect(!f.daemonLog.contains("trailing newline"))
    }
}

/// `--unlock` opens the collection the default alias names, and creates `login` only when
/// there is no default collection.
@Suite(.timeLimit(.minutes(5))) struct UnlockDefaultTests {
    @Test func theDefaultAliasDecidesWhatUnlocks() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        _ = f.stopDaemon()
        let store = Keychain(provider: try FileStore(directory: f.dataDir, kdf: .testing), sessionCollection: false)
        let work = try store.createCollection(label: "Work", id: CollectionID("work")!, password: try SecureBytes(Array("work pw".utf8)))
        try store.setAlias(Keychain.defaultAlias, to: work)

        try f.startDaemon(unlock: true, password: "work pw")
        #expect(eventually { f.daemonLog.contains("collection work unlocked (the default one)") }, "\(f.daemonLog)")
        #expect(!f.daemonLog.contains("created the login collection"))
        _ = f.stopDaemon()
        #expect(try !store.collectionIDs().contains(.login), "no login was made beside the default collection")
        // A password that does not open the default collection keeps cofferd from starting, saying which.
        #expect(throws: (any Error).self) { try f.startDaemon(unlock: true, password: "login pw") }
    }
}
