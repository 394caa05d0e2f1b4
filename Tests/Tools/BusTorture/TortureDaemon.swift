import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import SecretServiceClient

/// cofferd serving one data directory on a private bus, started again and again: SIGKILLed
/// by the torture, stopped with SIGTERM at the end.
final class TortureDaemon {
    /// The `login` password; it reaches cofferd through stdin only.
    static let password = Array("torture password".utf8)

    let bus: PrivateBus
    let executable: String
    let dataDirectory: String
    /// HOME and runtime directory of cofferd.
    let home: String
    private(set) var child: ChildProcess?
    /// The unique name of the last cofferd that owned the bus name.
    private var lastOwner: String?
    /// Every PID the daemons and their buses run as, for the interrupt handler.
    static let livePIDs = Mutex<Set<pid_t>>([])

    init(executable: String, dataDirectory: String, home: String) throws {
        self.executable = executable
        self.dataDirectory = dataDirectory
        self.home = home
        bus = try PrivateBus()
        Self.livePIDs.withLock { _ = $0.insert(bus.pid) }
    }

    deinit { shutdown() }

    /// Starts cofferd with `--unlock` and waits (bounded) until it owns the bus name.
    func start() throws {
        precondition(child == nil, "cofferd already runs")
        var environment = bus.environment([
            "HOME": home,
            "XDG_DATA_HOME": home + "/.local/share",
            "XDG_RUNTIME_DIR": home,
        ])
        for name in ["COFFER_PINENTRY", "DISPLAY", "WAYLAND_DISPLAY"] { environment[name] = nil }
        // A pinentry that does not exist: a prompt is dismissed, never shown.
        let arguments = ["--foreground", "--unlock", "--data-dir", dataDirectory, "--pinentry", home + "/no-pinentry"]
        let started = try ChildProcess(executable, arguments: arguments, environment: environment, stdin: Self.password)
        child = started
        Self.livePIDs.withLock { _ = $0.insert(started.pid) }
        lastOwner = try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: started, previousOwner: lastOwner)
    }

    /// Whether cofferd runs.
    var isRunning: Bool { child?.isRunning ?? false }

    /// What cofferd wrote to stderr (the last `limit` characters).
    func log(limit: Int = 2000) -> String { String((child?.stderr ?? "").suffix(limit)) }

    /// Sends `signal` now, without waiting.
    func send(_ signal: Int32) { child?.send(signal: signal) }

    /// Waits (at most `grace` seconds, then SIGKILLs) for cofferd to end; returns how it ended.
    @discardableResult
    func reap(grace: TimeInterval = 10) -> ChildResult? {
        guard let ended = child else { return nil }
        child = nil
        defer { Self.livePIDs.withLock { _ = $0.remove(ended.pid) } }
        return ended.wait(timeout: grace)
    }

    /// Stops cofferd (SIGTERM) and the bus. Idempotent.
    func shutdown() {
        send(SIGTERM)
        reap(grace: 5)
        bus.stop()
        Self.livePIDs.withLock { _ = $0.remove(bus.pid) }
    }
}
