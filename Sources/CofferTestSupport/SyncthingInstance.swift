import Foundation
import Synchronization

/// A real Syncthing (Debian's `syncthing`) for the tests, reaching nothing but 127.0.0.1: its
/// config is written before its first start with discovery, relays, NAT traversal, STUN,
/// crash and usage reports and upgrades off, listening and serving its REST API on loopback
/// ports, and knowing its peers by explicit loopback addresses.
public final class SyncthingInstance: Sendable {
    /// The executable, when installed.
    public static var executable: String? { Executables.inPath("syncthing") }

    /// Its home (keys, config, database).
    public let home: String
    /// The folder it shares (`folderID`).
    public let folder: String
    public let deviceID: String
    public let listenPort: Int
    public let apiPort: Int
    public let apiKey: String
    private let child: Mutex<ChildProcess?>

    /// Makes its keys in `root`/home and a shared folder `root`/folder; nothing is started.
    public init(root: String) throws {
        guard let executable = Self.executable else { throw ChildProcessError.notFound("syncthing") }
        home = root + "/home"
        folder = root + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let environment = Self.environment.merging(["HOME": home]) { $1 }
        let generated = try ChildProcess(executable, arguments: ["generate", "--home=\(home)", "--no-default-folder", "--skip-port-probing"],
                                         environment: environment).wait(timeout: 60)
        guard generated.succeeded else { throw ChildProcessError.failed("syncthing generate: \(generated)") }
        let id = try ChildProcess(executable, arguments: ["--home=\(home)", "--device-id"], environment: environment).wait(timeout: 30)
        deviceID = id.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard id.succeeded, deviceID.count > 50 else { throw ChildProcessError.failed("syncthing --device-id: \(id)") }
        let ports = LoopbackPorts.free(count: 2)
        listenPort = ports
        apiPort = ports + 1
        apiKey = UUID().uuidString
        child = Mutex(nil)
    }

    deinit { stop() }

    static let environment = ["PATH": "/usr/bin:/bin", "STNOUPGRADE": "1", "STNODEFAULTFOLDER": "1", "STNORESTART": "1"]

    /// Writes its whole config: itself and `peers` (each reached at its loopback port only),
    /// and the folder `folderID` shared with them, watched and rescanned quickly.
    public func configure(folderID: String, peers: [SyncthingInstance]) throws {
        let devices = ([self] + peers).map { device in
            """
                <device id="\(device.deviceID)" name="\(device === self ? "self" : "peer")" compression="metadata" introducer="false">
                    <address>tcp://127.0.0.1:\(device.listenPort)</address>
                    <autoAcceptFolders>false</autoAcceptFolders>
                </device>
            """
        }.joined(separator: "\n")
        let sharing = ([self] + peers).map { "        <device id=\"\($0.deviceID)\"></device>" }.joined(separator: "\n")
        let config = """
            <configuration version="36">
                <folder id="\(folderID)" label="\(folderID)" path="\(folder)" type="sendreceive" rescanIntervalS="60" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false">
            \(sharing)
                    <markerName>.stfolder</markerName>
                </folder>
            \(devices)
                <gui enabled="true" tls="false">
                    <address>127.0.0.1:\(apiPort)</address>
                    <apikey>\(apiKey)</apikey>
                </gui>
                <options>
                    <listenAddress>tcp://127.0.0.1:\(listenPort)</listenAddress>
                    <globalAnnounceEnabled>false</globalAnnounceEnabled>
                    <localAnnounceEnabled>false</localAnnounceEnabled>
                    <relaysEnabled>false</relaysEnabled>
                    <natEnabled>false</natEnabled>
                    <startBrowser>false</startBrowser>
                    <urAccepted>-1</urAccepted>
                    <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                    <crashReportingEnabled>false</crashReportingEnabled>
                    <stunKeepaliveStartS>0</stunKeepaliveStartS>
                    <stunServer></stunServer>
                    <globalAnnounceServer></globalAnnounceServer>
                    <reconnectionIntervalS>1</reconnectionIntervalS>
                    <restartOnWakeup>false</restartOnWakeup>
                    <setLowPriority>false</setLowPriority>
                </options>
            </configuration>
            """
        try config.write(toFile: home + "/config.xml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/.stfolder", withIntermediateDirectories: true)
    }

    /// Starts it (configure first); returns once its REST API answers.
    public func start() throws {
        guard let executable = Self.executable else { throw ChildProcessError.notFound("syncthing") }
        let started = try ChildProcess(executable, arguments: ["serve", "--home=\(home)", "--no-browser", "--no-restart", "--no-upgrade"],
                                       environment: Self.environment.merging(["HOME": home]) { $1 })
        child.withLock { $0 = started }
        guard eventually(timeout: 30, { !started.isRunning || (try? self.rest("/rest/system/ping")) != nil }), started.isRunning else {
            throw ChildProcessError.failed("syncthing did not start: \(started.terminate())")
        }
    }

    /// Stops it (its folder and home stay).
    public func stop() {
        child.withLock { if let running = $0 { _ = running.terminate() }; $0 = nil }
    }

    /// The body of a GET of its REST API at `path`; throws unless it answers 200.
    public func rest(_ path: String) throws -> String {
        let result = try ChildProcess("curl", arguments: ["-sf", "--max-time", "5", "-H", "X-API-Key: \(apiKey)", "http://127.0.0.1:\(apiPort)\(path)"],
                                      environment: ["PATH": "/usr/bin:/bin"]).wait(timeout: 10)
        guard result.succeeded else { throw ChildProcessError.failed("GET \(path): \(result)") }
        return result.stdout
    }

    /// Whether it is connected to `peer` now.
    public func isConnected(to peer: SyncthingInstance) -> Bool {
        guard let body = try? rest("/rest/system/connections"),
              let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              let connections = json["connections"] as? [String: [String: Any]] else { return false }
        return connections[peer.deviceID]?["connected"] as? Bool == true
    }

    /// Two instances sharing folder `folderID`, started and connected to each other, under `root`.
    public static func pair(root: String, folderID: String = "coffer") throws -> (SyncthingInstance, SyncthingInstance) {
        let a = try SyncthingInstance(root: root + "/a")
        let b = try SyncthingInstance(root: root + "/b")
        try a.configure(folderID: folderID, peers: [b])
        try b.configure(folderID: folderID, peers: [a])
        try a.start()
        try b.start()
        guard eventually(timeout: 60, { a.isConnected(to: b) && b.isConnected(to: a) }) else {
            throw ChildProcessError.timedOut("the two Syncthing instances did not connect")
        }
        return (a, b)
    }
}
