import CofferCrypto
import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Synchronization
import Testing

/// cofferd's D-Bus loop never waits for the disk. With every flush made 200 ms slower
/// (`COFFER_TEST_FLUSH_DELAY_MS`, honoured by debug builds), each kind of write one client makes
/// waits for its flushes, while another client's reads, made all along, are answered at once;
/// and the loop's own record of its longest dispatch (`LongestDispatchMicroseconds`) says so.
@Suite(.timeLimit(.minutes(5))) struct LoopLatencyTests {
    static let flushDelay = Duration.milliseconds(200)

    @Test func aSlowDiskHoldsTheWritesNotAnotherClientsCalls() throws {
        let f = try DaemonFixture(daemonEnvironment: ["COFFER_TEST_FLUSH_DELAY_MS": "200"])
        defer { f.shutdown() }
        let writer = f.client.library
        let session = try writer.openSession()
        let extra = try writer.createCollection(label: "Extra", password: try SecureBytes(Array("extra pw".utf8)), session: session)
        let reader = try f.newClient().library
        _ = try reader.search(in: SecretPath.login, [:])   // the bus has told cofferd who the reader is

        let reading = Mutex(true)
        let slowest = Mutex(Duration.zero)
        let reads = Atomic(0)
        let readerDone = DispatchGroup()
        DispatchQueue.global().async(group: readerDone) {
            while reading.withLock({ $0 }) {
                let began = ContinuousClock.now
                _ = try? reader.search(in: SecretPath.login, ["loop": "latency"])
                _ = try? reader.property(CollectionInterface.Property.label, of: CollectionInterface.name, on: extra)
                let took = ContinuousClock.now - began
                slowest.withLock { $0 = max($0, took) }
                reads.add(1, ordering: .relaxed)
            }
        }

        var item = SecretPath.none
        let writes: [(String, () throws -> Void)] = [
            ("CreateItem", {
                item = try writer.createItem(in: SecretPath.login, label: "slow disk", attributes: ["loop": "latency"],
                                             secret: try SecureBytes(Array("first".utf8)), session: session)
            }),
            ("SetSecret", { try writer.setSecret(of: item, to: try SecureBytes(Array("second".utf8)), session: session) }),
            ("an item's Label", { try writer.setLabel(ofItem: item, to: "slower disk") }),
            ("a collection's Label", { try writer.setLabel(of: extra, to: "Renamed") }),
            ("SetAlias", { try writer.setAlias("spare", to: extra) }),
            ("Item.Delete", { try writer.deleteItem(item) }),
            ("Collection.Delete", { try writer.deleteCollection(extra) }),
        ]
        for (name, write) in writes {
            let began = ContinuousClock.now
            try write()
            let took = ContinuousClock.now - began
            #expect(took >= Self.flushDelay, "\(name) took \(took): it did not wait for a flush")
        }
        reading.withLock { $0 = false }
        readerDone.wait()

        let longest = try #require(try f.client.library.property(CofferDaemonInterface.Property.longestDispatch,
                                                                 of: CofferDaemonInterface.name,
                                                                 on: CofferDaemonInterface.path).uint64)
        #expect(reads.load(ordering: .relaxed) >= 7, "the reader made \(reads.load(ordering: .relaxed)) rounds")
        #expect(slowest.withLock { $0 } < Self.flushDelay / 2, "a read waited \(slowest.withLock { $0 }) behind the writes")
        #expect(longest < 100_000, "the loop spent \(longest) µs on one dispatch")
    }
}
