import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// `cofferd --unlock` without `--foreground`: the process that detaches and serves is the one
/// whose libgcrypt secure memory is locked and that read the password.
@Suite(.timeLimit(.minutes(10))) struct DetachTests {
    /// The secure pool is locked (mlock) in the serving process, not only in the one that
    /// forked it: locks are not inherited across fork.
    @Test func detachedDaemonKeepsItsSecureMemoryLocked() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        #expect(f.stopDaemon()?.exitCode == 0)

        let password = "detached password\n"
        let daemon = try Detached(f, password: Array(password.utf8))
        defer { daemon.stop() }
        #expect(daemon.launched.exitCode == 0 && !daemon.launched.timedOut, "\(daemon.launched)")
        let pid = daemon.pid
        #expect(pid > 0 && pid != daemon.launcherPID, "the name must be owned by the detached daemon when the command returns")
        guard pid > 0 else { return }

        let locked = Self.lockedKiB(of: pid)
        #expect((locked ?? 0) > 0, "VmLck of the serving cofferd (pid \(pid)) is \(locked.map { "\($0) kB" } ?? "unreadable"): its secure memory is not locked")

        // The password read after the fork created and unlocked login; clients store in it.
        let c = try f.newClient()
        #expect(try c.isLocked(SecretPath.login) == false)
        try f.store(label: "detached", ["k": "detached"], secret: Array("d".utf8))
        #expect(try f.lookup(["k": "detached"]).stdout == "d")
        // The password was read whole, less its one trailing newline.
        _ = try c.library.lock([SecretPath.login])
        let session = try c.library.openSession()
        expectDBusError(SecretServiceError.Name.denied) { try c.library.unlock(SecretPath.login, password: SecureBytes(password), session: session) }
        try c.library.unlock(SecretPath.login, password: SecureBytes("detached password"), session: session)
        #expect(try c.isLocked(SecretPath.login) == false)

        #expect(daemon.stop(), "detached cofferd ignored SIGTERM")
    }

    /// A password longer than one read(2) chunk arrives whole; a wrong one makes the command
    /// fail (the parent reports the child's start-up failure).
    @Test func longPasswordAndWrongPasswordWhenDetached() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        #expect(f.stopDaemon()?.exitCode == 0)
        let password = (0..<10_000).map { UInt8(0x21 + $0 % 90) }

        let first = try Detached(f, password: password)
        #expect(first.launched.exitCode == 0, "\(first.launched)")
        #expect(first.stop(), "detached cofferd ignored SIGTERM")

        let wrong = try Detached(f, password: Array(password.dropLast()))
        defer { wrong.stop() }
        #expect(wrong.launched.exitCode == 3, "\(wrong.launched)")
        #expect(wrong.launched.stderr.hasPrefix("cofferd: the password given to --unlock does not open"), "\(wrong.launched)")
        #expect(wrong.pid == 0, "a daemon whose --unlock failed must not serve")

        let again = try Detached(f, password: password)
        defer { again.stop() }
        #expect(again.launched.exitCode == 0, "\(again.launched)")
        #expect(again.pid > 0)
        #expect(try f.newClient().isLocked(SecretPath.login) == false)
    }

    /// VmLck of `pid` in kB (nil if unreadable).
    static func lockedKiB(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmLck:") }) else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}

/// One `cofferd --unlock [arguments]` run without `--foreground` on the fixture's bus and data: how the
/// command ended and the pid of the daemon that then owns the bus name (0 if none).
final class Detached: @unchecked Sendable {
    let launched: ChildResult
    let launcherPID: pid_t
    private(set) var pid: pid_t = 0

    init(_ f: DaemonFixture, password: [UInt8], arguments extra: [String] = []) throws {
        let launcher = try ChildProcess(try DaemonFixture.cofferdPath,
                                        arguments: ["--unlock", "--data-dir", f.dataDir, "--pinentry", "/nonexistent"] + extra,
                                        environment: f.environment(), stdin: password)
        launcherPID = launcher.pid
        launched = launcher.wait(timeout: 60)
        let probe = try DBusConnection(address: f.bus.address)
        defer { probe.close() }
        if let owner = try? probe.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                       arguments: [.string(SecretServiceClient.busName)]).first?.uint32 {
            pid = pid_t(owner)
        }
    }

    /// SIGTERM, then SIGKILL after 10 s; returns whether SIGTERM sufficed. Idempotent.
    @discardableResult
    func stop() -> Bool {
        guard pid > 0 else { return true }
        defer { pid = 0 }
        kill(pid, SIGTERM)
        if waitForExit(of: pid, timeout: 10) { return true }
        kill(pid, SIGKILL)
        _ = waitForExit(of: pid, timeout: 5)
        return false
    }

    deinit { stop() }
}
