import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// A prompt reaches a user who has only a terminal: with no display, cofferd picks the real
/// pinentry-curses on the terminal in GPG_TTY (a tmux pane here), and what is typed there
/// unlocks the collection.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Executables.inPath("tmux") != nil && Executables.inPath("pinentry-curses") != nil,
                                         "tmux or pinentry-curses is not installed"))
struct TerminalPromptTests {
    /// Runs tmux with a socket of its own.
    static func tmux(_ socket: String, _ arguments: [String]) throws -> ChildResult {
        try ChildProcess("tmux", arguments: ["-S", socket] + arguments).wait(timeout: 10)
    }

    /// What the pane `target` shows once it shows `text` (or after 30 s, whatever it shows).
    static func screen(_ socket: String, _ target: String, showing text: String) throws -> String {
        var screen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            screen = try tmux(socket, ["capture-pane", "-p", "-t", target]).stdout
            if screen.contains(text) { break }
            Thread.sleep(forTimeInterval: 0.05)   // tmux tells nobody when a pane changes: look again
        }
        return screen
    }

    @Test func pinentryCursesOnTheTerminalInGPGTTY() throws {
        let root = NSTemporaryDirectory() + "coffer-tty-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let socket = root + "/tmux"
        #expect(try Self.tmux(socket, ["new-session", "-d", "-s", "prompt", "-x", "100", "-y", "30", "sleep 300"]).succeeded)
        defer { _ = try? Self.tmux(socket, ["kill-server"]) }
        let tty = try Self.tmux(socket, ["display-message", "-p", "-t", "prompt", "#{pane_tty}"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(tty.hasPrefix("/dev/"), "\(tty)")

        let bus = try PrivateBus()
        defer { bus.stop() }   // cofferd leaves with its bus
        // No DISPLAY, no --pinentry: cofferd must choose the terminal pinentry itself.
        let environment = bus.environment(["PATH": "/usr/bin:/bin", "HOME": root, "GPG_TTY": tty, "TERM": "xterm"])
        let daemon = try ChildProcess(try DaemonFixture.cofferdPath, arguments: ["--foreground", "--unlock", "--data-dir", root + "/data"],
                                      environment: environment, stdin: Array("typed on a terminal\n".utf8))
        defer { _ = daemon.terminate(grace: 5) }
        try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: daemon)

        let client = SecretServiceClient(connection: try DBusConnection(address: bus.address))
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        _ = try client.lock([login])
        let reply = try client.call(ServiceInterface.Unlock.self, on: SecretPath.service, .init(objects: [login]))
        let outcome = Outcome()
        let waiter = Thread {
            outcome.set(Result { try client.complete(prompt: reply.prompt, timeout: .seconds(60)) })
        }
        waiter.start()

        // The dialog is drawn in the pane; type the password there.
        let screen = try Self.screen(socket, "prompt", showing: "Login")
        #expect(screen.contains("Login"), "pinentry never showed the prompt; pane:\n\(screen)\ncofferd:\n\(daemon.stderr)")
        #expect(try Self.tmux(socket, ["send-keys", "-t", "prompt", "typed on a terminal", "Enter"]).succeeded)

        let result = try #require(outcome.wait(timeout: 30), "the prompt did not complete; cofferd:\n\(daemon.stderr)")
        #expect(try result.get() == .objectPathArray([login]))
        #expect(try !client.collection(login).isLocked)
    }
}

/// `cofferd --unlock` started on a terminal asks for the password there, without echo.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Executables.inPath("tmux") != nil, "tmux is not installed"))
struct UnlockOnATerminalTests {
    @Test func thePasswordIsAskedWithoutEcho() throws {
        let root = NSTemporaryDirectory() + "coffer-unlock-tty-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let socket = root + "/tmux"
        let command = "env DBUS_SESSION_BUS_ADDRESS='\(bus.address)' HOME='\(root)' '\(try DaemonFixture.cofferdPath)' --foreground --unlock --data-dir '\(root)/data'"
        #expect(try TerminalPromptTests.tmux(socket, ["new-session", "-d", "-s", "unlock", "-x", "120", "-y", "30", command]).succeeded)
        defer { _ = try? TerminalPromptTests.tmux(socket, ["kill-server"]) }

        var screen = try TerminalPromptTests.screen(socket, "unlock", showing: "Password of the default collection")
        #expect(screen.contains("Password of the default collection"), "no prompt; pane:\n\(screen)")
        #expect(try TerminalPromptTests.tmux(socket, ["send-keys", "-t", "unlock", "typed unseen", "Enter"]).succeeded)

        let client = SecretServiceClient(connection: try DBusConnection(address: bus.address))
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        let served = Date().addingTimeInterval(30)
        while Date() < served, (try? client.collection(login)) == nil { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try !client.collection(login).isLocked)
        screen = try TerminalPromptTests.tmux(socket, ["capture-pane", "-p", "-t", "unlock"]).stdout
        #expect(!screen.contains("typed unseen"), "the password was echoed:\n\(screen)")
        // It is the password: the collection opens with it.
        let session = try client.openSession()
        _ = try client.lock([login])
        try client.unlock(login, password: try SecureBytes(Array("typed unseen".utf8)), session: session)
    }
}

/// A result handed from the thread awaiting the prompt.
private final class Outcome: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<DBusValue, any Error>?

    func set(_ result: Result<DBusValue, any Error>) {
        self.result = result
        done.signal()
    }

    func wait(timeout: TimeInterval) -> Result<DBusValue, any Error>? {
        done.wait(timeout: .now() + timeout) == .success ? result : nil
    }
}
