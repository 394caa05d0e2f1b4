import CofferTestSupport
import CofferCrypto
import DBusKit
import Foundation
import Synchronization
import Testing

/// Several clients at once, while another keeps locking and unlocking (unlocking runs off the
/// daemon's loop): every call either works or fails with IsLocked, and what was stored is there.
@Suite(.timeLimit(.minutes(10))) struct StressTests {
    @Test func concurrentClientsWhileLockingAndUnlocking() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let workers = 3
        let duration: TimeInterval = 5
        let clients = try (0..<workers).map { _ in try f.newClient() }
        let locker = try f.newClient()
        let stop = Mutex(false)
        let unexpected = Mutex<[String]>([])
        let stored = Mutex<[ObjectPath: [UInt8]]>([:])
        let lockCycles = Mutex(0)

        let lockerThread = Thread {
            do {
                let session = try locker.openDH()
                while !stop.withLock({ $0 }) {
                    try locker.service("Lock", [.objectPathArray([SS.login])])
                    usleep(2_000)
                    try locker.unlockWithMasterPassword(SS.login, password: DaemonFixture.loginPassword, session: session)
                    lockCycles.withLock { $0 += 1 }
                    usleep(150_000)
                }
            } catch {
                unexpected.withLock { $0.append("locker: \(error)") }
            }
        }
        lockerThread.start()

        DispatchQueue.concurrentPerform(iterations: workers) { w in
            let c = clients[w]
            do {
                let session = w % 2 == 0 ? try c.openDH() : try c.openPlain()
                let end = Date().addingTimeInterval(duration)
                var r = 0
                while Date() < end {
                    r += 1
                    let secret = Array("worker \(w) round \(r)".utf8) + Random.bytes(r % 7)
                    do {
                        let item = try c.createItem(label: "w\(w)r\(r)", attributes: ["w": "\(w)", "r": "\(r)"],
                                                    secret: secret, session: session)
                        stored.withLock { $0[item] = secret }
                        let back = try c.getSecret(item, session: session)
                        if back != secret { unexpected.withLock { $0.append("w\(w)r\(r): read back other bytes") } }
                    } catch let error as DBusError where error.name == ErrorName.isLocked {
                        // Locked in between: fine.
                    }
                    do {
                        _ = try c.searchItems(["w": "\(w)"])
                        _ = try c.items(of: SS.login)
                        _ = try c.getSecrets(Array(stored.withLock { $0 }.keys.prefix(5)), session: session)
                    } catch let error as DBusError where error.name == ErrorName.isLocked {
                    }
                }
            } catch {
                unexpected.withLock { $0.append("worker \(w): \(error)") }
            }
        }
        stop.withLock { $0 = true }
        #expect(eventually(timeout: 30) { lockerThread.isFinished }, "locker thread did not finish")
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 }.prefix(5))\nlog:\n\(f.daemonLog.suffix(2000))")
        #expect(lockCycles.withLock { $0 } >= 2)
        #expect(stored.withLock { $0 }.count >= 10)
        #expect(f.daemonIsRunning)

        // Everything acknowledged is there, and survives a restart.
        let c = f.client!
        let session = try c.openDH()
        try c.unlockWithMasterPassword(SS.login, password: DaemonFixture.loginPassword, session: session)
        let expected = stored.withLock { $0 }
        #expect(!expected.isEmpty)
        #expect(Set(try c.items(of: SS.login)) == Set(expected.keys))
        #expect(try c.getSecrets(Array(expected.keys), session: session) == expected)
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: true)
        #expect(try f.client.getSecrets(Array(expected.keys), session: try f.client.openPlain()) == expected)
    }
}
