import Foundation
import Synchronization

/// A private `dbus-daemon` for one test: its own config in a fresh temporary directory (an
/// allow-all session-type policy, `unix:dir=` listener, EXTERNAL auth, and **no service
/// directories**, so nothing is ever auto-activated), run with `--nofork` as a child process.
///
/// `address` is what clients connect to; `environment` adds `DBUS_SESSION_BUS_ADDRESS` for child
/// processes. `stop()` (or deinit) ends the daemon by PID (SIGTERM, then SIGKILL) and removes the
/// directory.
public final class PrivateBus: Sendable {
    public let address: String
    /// The temporary directory holding the config and the socket.
    public let directory: String
    private let daemon: ChildProcess
    private let stopped = Mutex(false)

    public init(startupTimeout: TimeInterval = 10) throws {
        guard let binary = Executables.inPath("dbus-daemon") else { throw ChildProcessError.notFound("dbus-daemon") }
        directory = NSTemporaryDirectory() + "/coffer-bus-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let configPath = directory + "/bus.conf"
        do {
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            daemon = try ChildProcess(binary, arguments: ["--config-file=\(configPath)", "--nofork", "--print-address=1"])
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        let started = daemon.waitForStdout(timeout: startupTimeout) { $0.contains("\n") }
        let line = daemon.stdout.split(separator: "\n").first.map(String.init) ?? ""
        guard started, !line.isEmpty else {
            let result = daemon.terminate(grace: 1)
            try? FileManager.default.removeItem(atPath: directory)
            throw ChildProcessError.timedOut("dbus-daemon did not print its address (\(result))")
        }
        address = line.trimmingCharacters(in: .whitespaces)
    }

    deinit { stop() }

    /// The daemon's PID.
    public var pid: pid_t { daemon.pid }

    /// Environment for child processes: this process's environment with
    /// `DBUS_SESSION_BUS_ADDRESS` pointing at this bus, `DBUS_SYSTEM_BUS_ADDRESS` at a socket
    /// that does not exist (no test reaches the machine's system bus unless it passes its own
    /// in `extra`), no `XDG_CONFIG_HOME` (settings come from the child's HOME) and the locale
    /// `LANG=C.UTF-8` (no `LC_*` or `LANGUAGE`), plus `extra`.
    ///
    /// The locale is set whatever this process has: a login as a normal user (`su -`,
    /// `runuser -l`) sets none, and without a UTF-8 locale libsecret's `secret-tool` refuses
    /// non-ASCII arguments ("Invalid byte sequence in conversion input").
    ///
    /// It also carries `TestEnvironment.fastKeyDerivation`: Coffer's debug builds then give new
    /// collections cheap Argon2id parameters (release builds refuse to start with it).
    public func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LC_") && $0.key != "LANGUAGE" }
        env["LANG"] = "C.UTF-8"
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory)/no-system-bus"
        env["XDG_CONFIG_HOME"] = nil
        env.merge(TestEnvironment.fastKeyDerivation) { $1 }
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Stops the daemon (SIGTERM, SIGKILL after 2 s) and removes its directory. Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        daemon.terminate(grace: 2)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
