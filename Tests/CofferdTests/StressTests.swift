import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import SecretServiceClient
import SecretServiceProtocol
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
        /// Signalled by each item a worker stores.
        let progress = DispatchSemaphore(value: 0)
        let lockerDone = DispatchSemaphore(value: 0)
        let seed = testSeed(20)

        Thread.detachNewThread {
            defer { lockerDone.signal() }
            do {
                let session = try locker.library.openSession()
                while !stop.withLock({ $0 }) {
                    _ = try locker.library.lock([SecretPath.login])
                    try locker.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: session)
                    lockCycles.withLock { $0 += 1 }
                    // The workers store a few items while it is unlocked, then it locks again.
                    for _ in 0..<workers where progress.wait(timeout: .now() + 1) == .timedOut { break }
                }
            } catch {
                unexpected.withLock { $0.append("locker: \(error)") }
            }
        }

        DispatchQueue.concurrentPerform(iterations: workers) { w in
            let c = clients[w]
            do {
                let session = w % 2 == 0 ? try c.library.openSession() : try c.library.openSession(.plain)
                var random = SeededGenerator(seed: seed, stream: UInt64(w))
                let end = Date().addingTimeInterval(duration)
                var r = 0
                while Date() < end {
                    r += 1
                    let secret = Array("worker \(w) round \(r)".utf8) + random.bytes(r % 7)
                    do {
                        let item = try c.createItem(label: "w\(w)r\(r)", attributes: ["w": "\(w)", "r": "\(r)"],
                                                    secret: secret, session: session)
                        stored.withLock { $0[item] = secret }
                        progress.signal()
                        let back = try c.secretBytes(of: item, session: session)
                        if back != secret { unexpected.withLock { $0.append("w\(w)r\(r) (seed \(seed)): read back other bytes") } }
                    } catch PromptError.dismissed {
                        // Locked in between: CreateItem asked to unlock first, and with no
                        // pinentry here the prompt was dismissed, storing nothing. Fine.
                    } catch let error as DBusError where error.name == SecretServiceError.Name.isLocked {
                        // Locked between the create and the read: fine.
                    }
                    do {
                        _ = try c.library.search(["w": "\(w)"])
                        _ = try c.items(of: SecretPath.login)
                        _ = try c.secrets(of: Array(stored.withLock { $0 }.keys.prefix(5)), session: session)
                    } catch let error as DBusError where error.name == SecretServiceError.Name.isLocked {
                    }
                }
            } catch {
                unexpected.withLock { $0.append("worker \(w): \(error)") }
            }
        }
        stop.withLock { $0 = true }
        #expect(lockerDone.wait(timeout: .now() + 30) == .success, "locker thread did not finish")
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 }.prefix(5))\nlog:\n\(f.daemonLog.suffix(2000))")
        #expect(lockCycles.withLock { $0 } >= 2)
        #expect(stored.withLock { $0 }.count >= 10)
        #expect(f.daemonIsRunning)

        // Everything acknowledged is there, and survives a restart.
        let c = f.client!
        let session = try c.library.openSession()
        try c.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: session)
        let expected = stored.withLock { $0 }
        #expect(!expected.isEmpty)
        #expect(Set(try c.items(of: SecretPath.login)) == Set(expected.keys))
        #expect(try c.secrets(of: Array(expected.keys), session: session) == expected)
        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: true)
        #expect(try f.client.secrets(of: Array(expected.keys), session: try f.client.library.openSession(.plain)) == expected)
    }
}
