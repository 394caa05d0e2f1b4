import CofferTestSupport
import Foundation
import SecretServiceClient
import Testing

/// One daemon-mode test's world: a private bus, the built `cofferd` serving its own data
/// directory there (login created and unlocked with `--unlock`), and a way to run the built
/// `coffer` WITHOUT `--data-dir` on that bus, with a HOME of its own that must stay empty
/// (proof that coffer went through the daemon instead of opening store files).
///
/// Every wait has a deadline and `shutdown()` stops the daemon (SIGTERM, then SIGKILL) and the
/// bus: a broken daemon fails a test, never hangs it.
final class CofferdFixture {
    static let loginPassword = "daemon login password"

    let root: String
    /// The daemon's store (not coffer's default directory).
    var daemonDataDir: String { root + "/daemon-data" }
    /// coffer's HOME and XDG_DATA_HOME live here: it must stay empty.
    var cofferHome: String { root + "/coffer-home" }
    let bus: PrivateBus
    private var daemon: ChildProcess?

    init() throws {
        root = NSTemporaryDirectory() + "coffer-daemon-" + UUID().uuidString
        for directory in [root + "/daemon-home", root + "/coffer-home"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        bus = try PrivateBus()
        do {
            try startDaemon()
        } catch {
            shutdown()
            throw error
        }
    }

    deinit { shutdown() }

    /// Lets `program` read every item of login (whose policy, `ask`, lets only an item's
    /// creator read it without a dialog, and this daemon can show none).
    func grant(_ program: String) throws {
        let coffer = try #require(Executables.built("coffer"))
        let result = try ChildProcess(coffer, arguments: ["--data-dir", daemonDataDir, "access", "grant", program, "--password-stdin"],
                                      environment: bus.environment(["HOME": cofferHome]),
                                      stdin: Array((Self.loginPassword + "\n").utf8)).wait(timeout: 60)
        #expect(result.exitCode == 0, "coffer access grant \(program): \(result)")
    }

    // MARK: The daemon

    private func startDaemon() throws {
        let cofferd = try #require(Executables.built("cofferd"), "cofferd is not built next to the tests")
        var environment = bus.environment(["HOME": root + "/daemon-home"])
        for name in ["XDG_DATA_HOME", "COFFER_DATA_DIR", "COFFER_PINENTRY", "DISPLAY", "WAYLAND_DISPLAY"] {
            environment[name] = nil
        }
        // No pinentry that exists: coffer never makes the daemon prompt, and must not.
        let child = try ChildProcess(cofferd, arguments: ["--unlock", "--foreground", "--data-dir", daemonDataDir,
                                                          "--pinentry", root + "/no-pinentry"],
                                     environment: environment, stdin: Array(Self.loginPassword.utf8))
        daemon = child
        do {
            try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: child)
        } catch {
            daemon = nil
            throw error
        }
    }

    /// What cofferd logged so far (for failure messages).
    var daemonLog: String { daemon?.stderr ?? "" }

    /// Stops cofferd and the bus and removes the directory. Idempotent.
    func shutdown() {
        if let daemon {
            self.daemon = nil
            daemon.terminate(grace: 5)
        }
        bus.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    // MARK: coffer and secret-tool

    /// coffer's environment: this bus, a HOME and XDG_DATA_HOME of its own, no COFFER_DATA_DIR,
    /// and TZ=UTC (as `CLIFixture`'s).
    var environment: [String: String] {
        ["HOME": cofferHome, "XDG_DATA_HOME": cofferHome + "/.local/share", "PATH": "/usr/bin:/bin",
         "LANG": "C.UTF-8", "TZ": "UTC", "DBUS_SESSION_BUS_ADDRESS": bus.address]
    }

    /// Runs `coffer arguments...` (no --data-dir unless given) with `stdin`.
    @discardableResult
    func run(_ arguments: [String], stdin: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildResult {
        let result = try CLIFixture.runCoffer(arguments, stdin: Array(stdin.utf8), environment: environment)
        #expect(!result.timedOut, "coffer \(arguments.joined(separator: " ")) timed out; cofferd log:\n\(daemonLog)",
                sourceLocation: sourceLocation)
        return result
    }

    /// Runs coffer and expects `status`; returns the result.
    @discardableResult
    func expect(_ status: Int32, _ arguments: [String], stdin: String = "",
                sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildResult {
        let result = try run(arguments, stdin: stdin, sourceLocation: sourceLocation)
        #expect(result.status == status,
                "coffer \(arguments.joined(separator: " ")): status \(result.status), stderr: \(result.stderr)",
                sourceLocation: sourceLocation)
        return result
    }

    /// `secret-tool arguments...` on this bus (the real libsecret client).
    func secretTool(_ arguments: [String], stdin: String? = nil) throws -> ChildResult {
        let tool = try #require(Executables.inPath("secret-tool"), "secret-tool is not installed")
        let child = try ChildProcess(tool, arguments: arguments, environment: bus.environment(["HOME": cofferHome]),
                                     stdin: stdin.map { Array($0.utf8) })
        let result = child.wait(timeout: 30)
        #expect(!result.timedOut, "secret-tool timed out; cofferd log:\n\(daemonLog)")
        return result
    }

    /// Every file or directory under coffer's HOME (expected: none).
    func filesInCofferHome() -> [String] {
        FileManager.default.enumerator(atPath: cofferHome)?.allObjects.compactMap { $0 as? String } ?? []
    }
}
