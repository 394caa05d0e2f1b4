import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import SecretServiceClient
import Synchronization
import Testing

/// One test's world: a private bus, the built `cofferd` serving a fresh data directory on it,
/// and a D-Bus client connection (with a running loop, so it receives signals).
///
/// Everything is stopped by `shutdown()` (call it in a `defer`), and every wait has a hard
/// deadline: a broken daemon makes a test fail, never hang.
final class DaemonFixture: @unchecked Sendable {
    static let loginPassword = "correct horse battery staple"

    let root: String
    let dataDir: String
    let bus: PrivateBus
    private(set) var daemon: ChildProcess?
    private(set) var client: TestClient!
    /// Every client made by `newClient()`, closed at shutdown.
    private var extraClients: [TestClient] = []
    /// Lines FakePinentry answers GETPIN with (one per request).
    let pinentryScript: String
    /// What FakePinentry was shown.
    let pinentryLog: String
    private let pinentryProgram: String?
    /// Options given to every cofferd this fixture starts.
    private let daemonOptions: [String]
    /// Variables added to the environment of every cofferd this fixture starts.
    private let daemonEnvironment: [String: String]
    /// The bus cofferd takes for the system bus (none: a socket that does not exist).
    private let systemBus: PrivateBus?
    /// The settings file cofferd and coffer read (`$XDG_CONFIG_HOME/coffer/coffer.conf`).
    var settingsFile: String { root + "/home/.config/coffer/coffer.conf" }

    /// Starts a bus and cofferd. With `unlock`, `password` is piped to `--unlock` (creating
    /// `login` on first start). With `pinentry`, FakePinentry answers prompts from `script`.
    /// `pinentryProgram` replaces FakePinentry (e.g. a path that does not exist). `systemBus`
    /// stands in for the system bus; `lockSettings` is the settings file's text;
    /// `daemonEnvironment` is added to cofferd's environment.
    init(unlock: Bool = true, password: String = DaemonFixture.loginPassword,
         pinentry: [String]? = nil, pinentryProgram: String? = nil, daemonOptions: [String] = [],
         daemonEnvironment: [String: String] = [:], systemBus: PrivateBus? = nil, lockSettings: String? = nil) throws {
        root = NSTemporaryDirectory() + "cofferd-e2e-" + UUID().uuidString
        dataDir = root + "/data"
        pinentryScript = root + "/pinentry-script"
        pinentryLog = root + "/pinentry-log"
        self.pinentryProgram = pinentryProgram
        self.daemonOptions = daemonOptions
        self.daemonEnvironment = daemonEnvironment
        self.systemBus = systemBus
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/home/.config/coffer", withIntermediateDirectories: true)
        bus = try PrivateBus()
        if let lockSettings { try lockSettings.write(toFile: settingsFile, atomically: true, encoding: .utf8) }
        if let pinentry { try setPinentryScript(pinentry) }
        do {
            try startDaemon(unlock: unlock, password: password)
        } catch {
            shutdown()
            throw error
        }
    }

    deinit { shutdown() }

    // MARK: The daemon

    static var cofferdPath: String {
        get throws {
            try #require(Executables.built("cofferd"), "cofferd is not built next to the tests")
        }
    }

    static var fakePinentryPath: String? { Executables.built("FakePinentry") }

    /// The environment of every child: this bus (and its C.UTF-8 locale), a private HOME, UTC,
    /// no inherited pinentry.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = bus.environment([
            "HOME": root + "/home",
            "XDG_DATA_HOME": root + "/home/.local/share",
            "XDG_RUNTIME_DIR": root,
            "XDG_CONFIG_HOME": root + "/home/.config",
            "TZ": "UTC",
            "FAKE_PINENTRY_SCRIPT": pinentryScript,
            "FAKE_PINENTRY_LOG": pinentryLog,
        ])
        env["COFFER_PINENTRY"] = nil
        env["DISPLAY"] = nil
        env["WAYLAND_DISPLAY"] = nil
        env["SECRET_BACKEND"] = nil
        env["SECRET_SERVICE_BUS_NAME"] = nil
        if let systemBus { env["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address }
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Starts cofferd (`--foreground --data-dir`), waits until it owns the bus name, then
    /// (re)connects the main client.
    func startDaemon(unlock: Bool, password: String = DaemonFixture.loginPassword) throws {
        precondition(daemon == nil, "daemon already running")
        try launch(arguments: unlock ? ["--unlock"] : [], stdin: unlock ? Array(password.utf8) : nil, previousOwner: nil)
    }

    /// Starts cofferd with `arguments` added to the common flags (nothing on its stdin).
    func startDaemon(arguments: [String]) throws {
        precondition(daemon == nil, "daemon already running")
        try launch(arguments: arguments, stdin: nil, previousOwner: nil)
    }

    /// Starts a second cofferd with `--replace --unlock` on the same data; returns how the
    /// first one ended once the new one owns the name.
    func replaceDaemon(password: String = DaemonFixture.loginPassword) throws -> ChildResult? {
        let previous = try daemonUniqueName
        let old = daemon
        daemon = nil
        for extra in extraClients { extra.close() }
        extraClients.removeAll()
        client = nil
        try launch(arguments: ["--replace", "--unlock"], stdin: Array(password.utf8), previousOwner: previous)
        return old?.wait(timeout: 10)
    }

    /// Runs cofferd with the common flags plus `extra`; waits until the bus name has an owner
    /// other than `previousOwner`.
    private func launch(arguments extra: [String], stdin: [UInt8]?, previousOwner: String?) throws {
        // Without FakePinentry, a program that does not exist: prompts are dismissed, never shown.
        let pinentry = pinentryProgram ?? Self.fakePinentryPath ?? root + "/no-pinentry"
        let arguments = ["--foreground", "--data-dir", dataDir, "--pinentry", pinentry]
            + daemonOptions + extra
        let child = try ChildProcess(try Self.cofferdPath, arguments: arguments, environment: environment(daemonEnvironment), stdin: stdin)
        daemon = child
        do {
            try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: child, previousOwner: previousOwner)
        } catch {
            daemon = nil
            throw error
        }
        client = try newClient()
    }

    /// Stops cofferd with `signal` (SIGKILL after `grace` seconds; `timedOut` then says so);
    /// returns how it ended. With no signal, waits for cofferd to end by itself.
    @discardableResult
    func stopDaemon(signal: Int32? = SIGTERM, grace: TimeInterval = 10) -> ChildResult? {
        for extra in extraClients { extra.close() }
        extraClients.removeAll()
        client = nil
        guard let daemon else { return nil }
        self.daemon = nil
        if let signal { daemon.send(signal: signal) }
        return daemon.wait(timeout: grace)
    }

    /// What cofferd logged so far (for failure messages).
    var daemonLog: String { daemon?.stderr ?? "" }

    /// The running cofferd's process id.
    var daemonPID: pid_t? { daemon?.pid }

    /// Whether cofferd still runs.
    var daemonIsRunning: Bool { daemon?.isRunning ?? false }

    /// The daemon's unique bus name.
    var daemonUniqueName: String {
        get throws { try client.connection.nameOwner(SecretServiceClient.busName) }
    }

    /// A fresh client connection (own unique name, own loop); closed at shutdown.
    func newClient() throws -> TestClient {
        let made = try TestClient(address: bus.address)
        extraClients.append(made)
        return made
    }

    /// Stops everything and removes the directory. Idempotent.
    func shutdown() {
        stopDaemon(grace: 5)
        screensavers.withLock { all in
            for connection in all.values { connection.close() }
            all.removeAll()
        }
        bus.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    // MARK: A screensaver

    private let screensavers = Mutex<[String: DBusConnection]>([:])

    /// A connection owning `name` (org.gnome.ScreenSaver, …) on this bus, as the screensaver
    /// does, kept until shutdown (cofferd checks who owns the name a signal claims).
    func screensaver(_ name: String) throws -> DBusConnection {
        try screensavers.withLock { all in
            if let existing = all[name] { return existing }
            let connection = try DBusConnection(address: bus.address)
            _ = try connection.requestName(name, flags: [.doNotQueue])
            all[name] = connection
            return connection
        }
    }

    // MARK: FakePinentry

    func setPinentryScript(_ lines: [String]) throws {
        try (lines.map { $0 + "\n" }.joined()).write(toFile: pinentryScript, atomically: true, encoding: .utf8)
    }

    /// What FakePinentry logged ("" if nothing yet).
    var pinentryLogText: String {
        (try? String(contentsOfFile: pinentryLog, encoding: .utf8)) ?? ""
    }

    // MARK: Access

    /// Lets `program` (by default this test process) read every item of `collection`, as the
    /// user would with `coffer access grant`: login's policy, `ask`, lets only an item's
    /// creator read it without a dialog.
    func grant(_ program: String = Executables.thisProcess, collection: String = "login", rights: [String] = [],
               password: String = DaemonFixture.loginPassword) throws {
        let coffer = try #require(Executables.built("coffer"))
        let result = try ChildProcess(coffer, arguments: ["--data-dir", dataDir, "access", "grant", program, "--collection", collection,
                                                          "--password-stdin"] + rights,
                                      environment: environment(), stdin: Array((password + "\n").utf8)).wait(timeout: 60)
        #expect(result.exitCode == 0, "coffer access grant \(program): \(result)")
    }

    /// `coffer --data-dir … arguments…` on this fixture's store, with the login password on
    /// stdin (`--password-stdin`) unless `password` is false; expects it to succeed.
    @discardableResult
    func coffer(_ arguments: [String], password: Bool = true, passwordText: String = DaemonFixture.loginPassword) throws -> ChildResult {
        let program = try #require(Executables.built("coffer"))
        let child = try ChildProcess(program, arguments: ["--data-dir", dataDir] + arguments + (password ? ["--password-stdin"] : []),
                                     environment: environment(),
                                     stdin: password ? Array((passwordText + "\n").utf8) : [])
        let result = child.wait(timeout: 60)
        #expect(result.exitCode == 0, "coffer \(arguments.joined(separator: " ")): \(result)")
        return result
    }

    /// `coffer log --json`, parsed: the audit events. With `unsealing`, their labels too (the
    /// login password is given for them; coffer records that unlock).
    func auditLog(unsealing: Bool = false) throws -> [[String: Any]] {
        let result = try coffer(["log", "--json"] + (unsealing ? ["--unseal"] : []), password: unsealing)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [[String: Any]])
    }

    // MARK: secret-tool

    /// Runs `secret-tool arguments…` on this bus with `stdin`; waits at most `timeout` seconds.
    @discardableResult
    func secretTool(_ arguments: [String], stdin: [UInt8]? = nil, timeout: TimeInterval = 30) throws -> ChildResult {
        let tool = try #require(Executables.inPath("secret-tool"), "secret-tool is not installed")
        let child = try ChildProcess(tool, arguments: arguments, environment: environment(), stdin: stdin)
        let result = child.wait(timeout: timeout)
        #expect(!result.timedOut, "secret-tool \(arguments.joined(separator: " ")) timed out; cofferd log:\n\(daemonLog)")
        return result
    }

    @discardableResult
    func secretTool(_ arguments: [String], stdin: String) throws -> ChildResult {
        try secretTool(arguments, stdin: Array(stdin.utf8))
    }

    /// `secret-tool store --label=label attributes…` with `secret` on stdin; expects success.
    func store(label: String, _ attributes: [String: String], secret: [UInt8],
               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try secretTool(["store", "--label=\(label)"] + Self.flatten(attributes), stdin: secret)
        #expect(result.exitCode == 0, "store failed: \(result)", sourceLocation: sourceLocation)
    }

    /// `secret-tool lookup attributes…`.
    func lookup(_ attributes: [String: String]) throws -> ChildResult {
        try secretTool(["lookup"] + Self.flatten(attributes))
    }

    static func flatten(_ attributes: [String: String]) -> [String] {
        attributes.keys.sorted().flatMap { [$0, attributes[$0]!] }
    }
}

// MARK: - Small helpers


/// Waits until process `pid` (a child or not) has ended: on a pidfd, which becomes readable
/// when it exits; false after `timeout` seconds.
func waitForExit(of pid: pid_t, timeout: TimeInterval) -> Bool {
    typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open") else {   // glibc 2.36
        Issue.record("this C library has no pidfd_open")
        return false
    }
    let descriptor = unsafeBitCast(symbol, to: PidfdOpen.self)(pid, 0)
    guard descriptor >= 0 else { return errno == ESRCH }   // gone already
    defer { close(descriptor) }
    let deadline = Date().addingTimeInterval(timeout)
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    while true {
        let milliseconds = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
        let ready = poll(&entry, 1, milliseconds)
        if ready >= 0 || errno != EINTR { return ready > 0 }
    }
}

/// The seed of a test's random data: `COFFER_TEST_SEED` when set, else `fallback`. Tests name it
/// in the messages of what depends on it, so that a failure can be replayed.
func testSeed(_ fallback: UInt64) -> UInt64 {
    ProcessInfo.processInfo.environment["COFFER_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
}

/// Expects `body` to throw a `DBusError` named one of `names`; returns it.
@discardableResult
func expectDBusError(_ names: String..., sourceLocation: SourceLocation = #_sourceLocation,
                     _ body: () throws -> Void) -> DBusError? {
    do {
        try body()
        Issue.record("expected \(names.joined(separator: " or ")), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        #expect(names.contains(error.name), "got \(error.name): \(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected DBusError \(names), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension Array where Element == UInt8 {
    var utf8String: String { String(decoding: self, as: UTF8.self) }
}
