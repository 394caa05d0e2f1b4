import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Start-up with `--unlock`: the password is gone from the daemon's memory once it serves, and
/// a damaged `login` neither stops the daemon nor gets replaced.
@Suite(.timeLimit(.minutes(5))) struct StartupRecoveryTests {
    /// Once cofferd serves, the `--unlock` password is nowhere in its memory (secure pool
    /// included): it was wiped as soon as `login` was unlocked.
    @Test func theUnlockPasswordIsWipedOnceServing() throws {
        let password = "unlockwipe-" + UUID().uuidString
        let scan = try MemoryScan.run(password: password, needles: ["unlockwipe-"])
        #expect(scan.found.isEmpty, "the --unlock password is still in cofferd's memory: \(scan)")
    }

    /// A `login` file damaged beyond opening: cofferd --unlock still starts, serves another
    /// collection, reports `login` as damaged when asked for it, and never writes over it.
    @Test func aDamagedLoginDoesNotStopTheDaemon() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let session = try f.client.library.openSession()
        let other = try f.client.library.createCollection(label: "Other", password: SecureBytes("other password"), session: session)
        let kept = try f.client.createItem(in: other, label: "kept", attributes: ["where": "other"], secret: "safe", session: session)
        #expect(f.stopDaemon()?.exitCode == 0)

        let login = f.dataDir + "/login.coffer"
        var bytes = try #require(FileManager.default.contents(atPath: login))
        for offset in 8..<40 { bytes[offset] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: login))

        try f.startDaemon(unlock: true)
        #expect(eventually { f.daemonLog.contains("login collection is damaged") }, "\(f.daemonLog)")
        let c = f.client!
        try c.library.unlock(other, password: SecureBytes("other password"), session: try c.library.openSession())
        let fresh = try c.library.openSession()
        #expect(try c.secretBytes(of: kept, session: fresh) == Array("safe".utf8))
        #expect(try c.library.search(["where": "other"]).unlocked == [kept])
        // Every access to login says it is damaged.
        for call in [{ _ = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login])) },
                     { _ = try c.library.properties(of: CollectionInterface.name, on: SecretPath.login) },
                     { _ = try c.createItem(label: "new", attributes: ["a": "b"], secret: "x", session: fresh) }] {
            let error = expectDBusError(DBusError.Name.failed) { try call() }
            #expect(error?.message.contains("damaged") == true, "\(String(describing: error))")
        }
        #expect(FileManager.default.contents(atPath: login) == bytes, "the damaged login file was changed")
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }
}
