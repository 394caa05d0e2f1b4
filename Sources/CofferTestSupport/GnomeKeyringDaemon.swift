import DBusKit
import Foundation

/// The real `gnome-keyring-daemon` (its secrets component) on a private bus, with a home of its
/// own in a temporary directory: for tests that read its files or talk to it as a client would.
///
/// Started with `--unlock`, it creates its `login` keyring with `password` (unless empty) and
/// writes `<dataHome>/keyrings/login.keyring`. `stop()` ends it (its files are then complete);
/// `remove()` also deletes its home and bus.
public final class GnomeKeyringDaemon: @unchecked Sendable {
    /// The executable, when installed.
    public static var executable: String? { Executables.inPath("gnome-keyring-daemon") }

    public let bus: PrivateBus
    public let home: String
    private var child: ChildProcess?

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
        let child = try ChildProcess(executable, arguments: ["--unlock", "--foreground", "--components=secrets"],
                                     environment: environment(), stdin: Array(password.utf8))
        self.child = child
        do {
            try bus.waitForOwner(of: "org.freedesktop.secrets", startedBy: child)
        } catch {
            remove()
            throw error
        }
    }

    /// Where its keyrings are: `<dataHome>/keyrings`.
    public var dataHome: String { home + "/data" }
    public var keyringsDirectory: String { dataHome + "/keyrings" }

    /// The environment a client of it needs (the bus, and its home for secret-tool).
    public func environment() -> [String: String] {
        bus.environment(["HOME": home, "XDG_DATA_HOME": dataHome, "XDG_RUNTIME_DIR": home,
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
        defer { child = nil }
        return child?.terminate(grace: 5)
    }

    /// Stops it and deletes its home and bus.
    public func remove() {
        stop()
        bus.stop()
        try? FileManager.default.removeItem(atPath: home)
    }
}
