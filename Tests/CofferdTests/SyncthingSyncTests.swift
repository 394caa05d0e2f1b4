import CofferTestSupport
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Two machines, each a real cofferd on its own private bus and store and a real Syncthing on
/// loopback, sharing one folder: what a user of two machines sees through secret-tool.
@Suite(.serialized, .timeLimit(.minutes(5)),
       .enabled(if: SyncthingInstance.executable != nil, "syncthing is not installed (scripts/setup --tests installs it)"))
struct SyncthingSyncTests {
    /// The two machines, with `login` synced: enabled on `a`, joined on `b`.
    final class Machines {
        let root: String
        let a: DaemonFixture
        let b: DaemonFixture
        let syncthingA: SyncthingInstance
        let syncthingB: SyncthingInstance

        init() throws {
            root = NSTemporaryDirectory() + "coffer-sync-" + UUID().uuidString
            (syncthingA, syncthingB) = try SyncthingInstance.pair(root: root)
            a = try DaemonFixture()
            b = try DaemonFixture()
            try a.coffer(["sync", "enable", syncthingA.folder, "--collection", "login"])
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: syncthingA.folder).first { $0.count == 32 })
            let there = "\(syncthingB.folder)/\(name)"
            try #require(eventually(timeout: 60) { FileManager.default.fileExists(atPath: there + "/collection.keys") })
            try b.coffer(["sync", "join", there, "--collection", "login"])
        }

        deinit {
            a.shutdown()
            b.shutdown()
            syncthingA.stop()
            syncthingB.stop()
            try? FileManager.default.removeItem(atPath: root)
        }

        /// The secret `machine` returns for `attributes` through secret-tool (nil: none).
        static func lookup(_ machine: DaemonFixture, _ attributes: [String: String]) -> String? {
            guard let result = try? machine.lookup(attributes), result.exitCode == 0 else { return nil }
            return result.stdout
        }
    }

    @Test func aWriteOnOneMachineIsReadableOnTheOtherWithItsSignal() throws {
        let machines = try Machines()
        let watcher = try machines.b.newClient()
        try machines.a.store(label: "Home Wi-Fi", ["ssid": "home"], secret: Array("hunter2".utf8))
        #expect(eventually(timeout: 60) { Machines.lookup(machines.b, ["ssid": "home"]) == "hunter2" })
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemCreated) != nil)
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged) != nil)

        // A change and a delete travel back the other way.
        try machines.b.store(label: "Home Wi-Fi", ["ssid": "home"], secret: Array("changed".utf8))
        #expect(eventually(timeout: 60) { Machines.lookup(machines.a, ["ssid": "home"]) == "changed" })
        #expect(try machines.b.secretTool(["clear", "ssid", "home"]).exitCode == 0)
        #expect(eventually(timeout: 60) { Machines.lookup(machines.a, ["ssid": "home"]) == nil })
    }

    @Test func concurrentEditsConvergeAndTheLoserIsKept() throws {
        let machines = try Machines()
        try machines.a.store(label: "Mail", ["service": "mail"], secret: Array("v0".utf8))
        #expect(eventually(timeout: 60) { Machines.lookup(machines.b, ["service": "mail"]) == "v0" })
        // Both change it before either sees the other's change (Syncthing waits a second
        // before it even looks).
        try machines.a.store(label: "Mail", ["service": "mail"], secret: Array("from-a".utf8))
        try machines.b.store(label: "Mail", ["service": "mail"], secret: Array("from-b".utf8))
        #expect(eventually(timeout: 60) {
            let (onA, onB) = (Machines.lookup(machines.a, ["service": "mail"]), Machines.lookup(machines.b, ["service": "mail"]))
            return onA == onB && (onA == "from-a" || onA == "from-b")
        })
        // The version that lost is listed on both machines, not lost.
        for machine in [machines.a, machines.b] {
            #expect(eventually(timeout: 30) { (try? machine.coffer(["sync", "conflicts"]).stdout.contains("Mail")) == true })
        }
    }

    @Test func aDeleteAgainstAnEditConvergesAndWhatLostIsKept() throws {
        let machines = try Machines()
        try machines.a.store(label: "Shared", ["k": "shared"], secret: Array("v0".utf8))
        #expect(eventually(timeout: 60) { Machines.lookup(machines.b, ["k": "shared"]) == "v0" })
        // A deletes it while B, not having seen that, edits it.
        #expect(try machines.a.secretTool(["clear", "k", "shared"]).exitCode == 0)
        try machines.b.store(label: "Shared", ["k": "shared"], secret: Array("edited".utf8))
        #expect(eventually(timeout: 60) {
            let (onA, onB) = (Machines.lookup(machines.a, ["k": "shared"]), Machines.lookup(machines.b, ["k": "shared"]))
            return onA == onB && (onA == nil || onA == "edited")
        })
        // Whichever won, the other is listed on both machines.
        for machine in [machines.a, machines.b] {
            #expect(eventually(timeout: 30) { (try? machine.coffer(["sync", "conflicts"]).stdout.contains("@")) == true })
        }
    }

    @Test func changesMadeWhileOneMachineIsStoppedMergeWhenItReturns() throws {
        let machines = try Machines()
        try machines.a.store(label: "Edited on B", ["k": "edit"], secret: Array("v0".utf8))
        try machines.a.store(label: "Deleted on A", ["k": "delete"], secret: Array("v0".utf8))
        #expect(eventually(timeout: 60) { Machines.lookup(machines.b, ["k": "delete"]) == "v0" })
        _ = machines.b.stopDaemon()
        try machines.a.store(label: "Made on A", ["k": "new-a"], secret: Array("a".utf8))
        #expect(try machines.a.secretTool(["clear", "k", "delete"]).exitCode == 0)
        // Changed on B while its daemon is stopped: the CLI writes the store directly.
        try machines.b.coffer(["update", "--collection", "login", "--attr", "k=edit", "--secret"],
                              passwordText: DaemonFixture.loginPassword + "\nb")
        try machines.b.startDaemon(unlock: true)
        #expect(eventually(timeout: 60) {
            Machines.lookup(machines.a, ["k": "edit"]) == "b" && Machines.lookup(machines.b, ["k": "new-a"]) == "a"
                && Machines.lookup(machines.b, ["k": "delete"]) == nil
        }, "B's log: \(machines.b.daemonLog)")
    }

    @Test func killingEitherDaemonMidSyncLosesNothingAcknowledged() throws {
        let machines = try Machines()
        var acknowledged: [String] = []
        for round in 0..<3 {
            for index in 0..<8 {
                let name = "r\(round)-\(index)"
                if (try? machines.a.secretTool(["store", "--label=\(name)", "n", name], stdin: Array(name.utf8)))?.exitCode == 0 {
                    acknowledged.append(name)
                }
            }
            // The writer killed while it may be exporting what it just wrote, and the other
            // while it may be applying what it received; both started again.
            _ = machines.a.stopDaemon(signal: SIGKILL)
            usleep(useconds_t(200_000 * round))
            _ = machines.b.stopDaemon(signal: SIGKILL)
            try machines.a.startDaemon(unlock: true)
            try machines.b.startDaemon(unlock: true)
        }
        #expect(acknowledged.count == 24)
        #expect(eventually(timeout: 90) { acknowledged.allSatisfy { Machines.lookup(machines.b, ["n": $0]) == $0 } })
        // And what the other machine acknowledged while being killed travels back.
        try machines.b.store(label: "from-b", ["n": "from-b"], secret: Array("from-b".utf8))
        _ = machines.b.stopDaemon(signal: SIGKILL)
        try machines.b.startDaemon(unlock: true)
        #expect(eventually(timeout: 90) { Machines.lookup(machines.a, ["n": "from-b"]) == "from-b" })
    }
}
