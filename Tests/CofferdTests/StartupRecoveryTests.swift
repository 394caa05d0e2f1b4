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
    /// Reads every readable mapping of process `pid` (as root reads any process) and tells
    /// whether `needle` occurs in it.
    static func memory(of pid: pid_t, contains needle: [UInt8]) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let memory = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/mem"), "cannot open /proc/\(pid)/mem")
        defer { try? memory.close() }
        var regions = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
            try? memory.seek(toOffset: bounds[0])
            guard let data = try? memory.read(upToCount: Int(bounds[1] - bounds[0])), !data.isEmpty else { continue }
            regions += 1
            if Array(data).firstRange(of: needle) != nil { return true }
        }
        #expect(regions > 5, "could read only \(regions) regions of process \(pid)")
        return false
    }

    /// Once cofferd serves, the `--unlock` password is nowhere in its memory (secure pool
    /// included): it was wiped as soon as `login` was unlocked.
    @Test func theUnlockPasswordIsWipedOnceServing() throws {
        let password = "unlock-wipe-" + UUID().uuidString
        let f = try DaemonFixture(password: password)
        defer { f.shutdown() }
        // A real call first, so that the daemon has served since start-up.
        _ = try f.client.quickItem(attributes: ["wipe": "check"], secret: "anything")
        let pid = try #require(f.daemonPID)
        #expect(try Self.memory(of: pid, contains: Array("unlock-wipe-".utf8)) == false,
                "the --unlock password is still in cofferd's memory")
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
