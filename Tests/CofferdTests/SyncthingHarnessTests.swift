import CofferTestSupport
import Foundation
import Testing

/// The Syncthing the sync tests run: two real instances on loopback only, sharing one folder.
@Suite(.timeLimit(.minutes(3)), .enabled(if: SyncthingInstance.executable != nil, "syncthing is not installed (scripts/setup --tests installs it)"))
struct SyncthingHarnessTests {
    @Test func twoInstancesOnLoopbackCarryAFileAndReachNothingElse() throws {
        let root = NSTemporaryDirectory() + "syncthing-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (a, b) = try SyncthingInstance.pair(root: root)
        defer {
            a.stop()
            b.stop()
        }
        try Data("carried".utf8).write(to: URL(fileURLWithPath: a.folder + "/probe.txt"))
        #expect(eventually(timeout: 60) { (try? String(contentsOfFile: b.folder + "/probe.txt", encoding: .utf8)) == "carried" })

        // What each runs with, as it reports it: loopback only, nothing that reaches outside.
        let config = try #require(try JSONSerialization.jsonObject(with: Data(a.rest("/rest/config").utf8)) as? [String: Any])
        let options = try #require(config["options"] as? [String: Any])
        #expect(options["listenAddresses"] as? [String] == ["tcp://127.0.0.1:\(a.listenPort)"])
        for key in ["globalAnnounceEnabled", "localAnnounceEnabled", "relaysEnabled", "natEnabled", "crashReportingEnabled"] {
            #expect(options[key] as? Bool == false, "\(key)")
        }
        #expect(options["urAccepted"] as? Int == -1)
        #expect(options["autoUpgradeIntervalH"] as? Int == 0)
        let devices = try #require(config["devices"] as? [[String: Any]])
        #expect(devices.allSatisfy { ($0["addresses"] as? [String])?.allSatisfy { $0.hasPrefix("tcp://127.0.0.1:") } == true })
    }
}
