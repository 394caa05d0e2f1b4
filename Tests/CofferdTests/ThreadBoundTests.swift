import CofferCrypto
import CofferTestSupport
import Dispatch
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Synchronization
import Testing

/// Clients writing to many collections at once do not make cofferd start a thread each: its
/// writers share a few threads, and it stays at 16 threads or fewer throughout.
@Suite(.timeLimit(.minutes(5))) struct ThreadBoundTests {
    @Test func writesToManyCollectionsAtOnceStayWithinSixteenThreads() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let pid = try #require(f.daemonPID)
        let count = 20
        let library = f.client.library
        let collections = try (0..<count).map { n in
            try library.createCollection(label: "Many \(n)", password: try SecureBytes(Array("pw \(n)".utf8)), session: try library.openSession())
        }
        let clients = try (0..<count).map { _ in try f.newClient() }
        let most = Mutex(0)
        let sampling = Mutex(true)
        let sampler = DispatchGroup()
        DispatchQueue.global().async(group: sampler) {
            while sampling.withLock({ $0 }) {
                if let now = UnlockThrottleDaemonTests.threads(of: pid) { most.withLock { $0 = max($0, now) } }
                usleep(2_000)
            }
        }
        let failures = Mutex([String]())
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                let session = try clients[index].library.openSession()
                for n in 0..<15 {
                    _ = try clients[index].createItem(in: collections[index], label: "item \(n)", attributes: ["n": "\(n)"],
                                                      secret: "s\(n)", session: session)
                }
            } catch {
                failures.withLock { $0.append("client \(index): \(error)") }
            }
        }
        sampling.withLock { $0 = false }
        sampler.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        for collection in collections { #expect(try f.client.items(of: collection).count == 15) }
        #expect(most.withLock { $0 } <= 16, "cofferd ran \(most.withLock { $0 }) threads")
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }
}
