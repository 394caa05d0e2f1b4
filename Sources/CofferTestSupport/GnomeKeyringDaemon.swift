import DBusKit
import Foundation
import Synchronization

/// The real `gnome-keyring-daemon` (its secrets component) on a private bus, with a home of its
/// own in a temporary directory: for tests that read its files or talk to it as a client would.
///
/// Started with `--unlock`, it creates its `login` keyring with `password` (unless empty) and
/// writes `<dataHome>/keyrings/login.keyring`. `stop()` ends it (its files are then complete);
/// `remove()` also deletes its home and bus.
public final class GnomeKeyringDaemon: Sendable {
    /// The executable, when installed.
    public static var executable: String? { Executables.inPath("gnome-keyring-daemon") }

    public let bus: PrivateBus
    public let home: String
    private let child: Mutex<ChildProcess?>

    /// Starts the daemon; `keyrings` (file name without `.keyring` to contents) are put in its
    /// keyrings directory first, for it to load.
    public init(password: String, keyrings: [String: [UInt8]] = [:]) throws {
        guard let executable = Self.executable else { throw ChildProcessError.notFound("gnome-keyring-daemon") }
        home = NSTemporaryDirectory() + "gnome-keyring-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home + "/data/keyrings", withIntermediateDirectories: true)
        for (name, contents) in keyrings {
            try Data(contents).write(to: URL(fileURLWithPath: home + "/data/keyrings/\(name).keyring"))
        }
        bus = try PrivateBus()
        let started = try ChildProcess(executable, arguments: ["--unlock", "--foreground", "--components=secrets"],
                                       environment: Self.environment(bus: bus, home: home), stdin: Array(password.utf8))
        child = Mutex(started)
        do {
            try bus.waitForOwner(of: "org.freedesktop.secrets", startedBy: started)
        } catch {
            remove()
            throw error
        }
    }

    /// Where its keyrings are: `<dataHome>/keyrings`.
    public var dataHome: String { home + "/data" }
    public var keyringsDirectory: String { dataHome + "/keyrings" }

    /// The environment a client of it needs (the bus, and its home for secret-tool).
    public func environment() -> [String: String] { Self.environment(bus: bus, home: home) }

    private static func environment(bus: PrivateBus, home: String) -> [String: String] {
        bus.environment(["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_RUNTIME_DIR": home,
                         "XDG_CONFIG_HOME": home + "/config"])
    }

    /// Runs `secret-tool` against it.
    public func secretTool(_ arguments: [String], stdin: [UInt8]? = nil) throws -> ChildResult {
        guard let tool = Executables.inPath("secret-tool") else { throw ChildProcessError.notFound("secret-tool") }
        return try ChildProcess(tool, arguments: arguments, environment: environment(), stdin: stdin).wait(timeout: 30)
    }

    /// Stops the daemon (SIGTERM); its files are complete afterwards.
    @discardableResult
    public func stop() -> ChildResult? {
        child.withLock { running in
            defer { running = nil }
            return running?.terminate(grace: 5)
        }
    }

    /// Stops it and deletes its home and bus.
    public func remove() {
        stop()
        bus.stop()
        try? FileManager.default.removeItem(atPath: home)
    }
}
