import CofferTestSupport
import Foundation
import Testing

/// A first run with no collection at all: cofferd's log and the clients' errors say to create
/// one (never to unlock one that does not exist).
@Suite(.timeLimit(.minutes(5))) struct FirstRunTests {
    @Test func withNoCollectionTheLogAndTheErrorSayToCreateOne() throws {
        let f = try DaemonFixture(unlock: false, pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        #expect(eventually { f.daemonLog.contains("warning: there is no collection yet") }, "\(f.daemonLog)")
        #expect(f.daemonLog.contains("coffer create-collection login"), "\(f.daemonLog)")
        let stored = try f.secretTool(["store", "--label=First", "service", "first"], stdin: "secret")
        #expect(stored.exitCode != 0, "\(stored)")
        #expect(stored.stderr.contains("there is no collection yet") && stored.stderr.contains("coffer create-collection login"),
                "\(stored)")
        #expect(!f.daemonLog.contains("coffer unlock"), "\(f.daemonLog)")
    }

    /// The tests' cheap key derivation reaches the daemon: the login collection it creates has the
    /// testing parameters, not production Argon2id (what makes the suite fast).
    @Test func underTheTestsADebugDaemonCreatesCollectionsWithCheapKeyDerivation() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        // The password's slot in login.keys: magic 8, version 2, uuid 16, count 1, kind 1, id 4,
        // created 8, then Argon2id's t (u32 little-endian) at byte 40 and m (KiB) at 44.
        let keys = Array(try Data(contentsOf: URL(fileURLWithPath: f.dataDir + "/login.keys")).prefix(48))
        #expect(keys.count == 48 && keys[27] == 1 && keys[40] == 1 && keys[44] == 64, "slot: \(keys)")
    }
}
