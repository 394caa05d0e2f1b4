import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Wrong passwords slow the next unlock down, whichever way they come: the password dialog
/// says so and checks the next password only when the wait is over, gnome-keyring's internal
/// interface waits before checking, and a restarted daemon (and `coffer`) still wait.
@Suite(.timeLimit(.minutes(5)), .enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
struct UnlockThrottleDaemonTests {
    @Test func theDialogSaysHowLongAndChecksTheNextPasswordAfterTheWait() throws {
        let f = try DaemonFixture(pinentry: ["wrong password", DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try PromptTests.lockedThenUnlock(c)
        let started = Date()
        let (dismissed, _) = try c.runPrompt(prompt)
        #expect(dismissed == false)
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(Date().timeIntervalSince(started) >= 0.9, "the right password came at once after a wrong one, and was checked at once")
        #expect(f.pinentryLogText.contains("SETERROR The unlock password was incorrect. After wrong passwords, the next is checked only 1 second from now."),
                "\(f.pinentryLogText)")
    }

    /// Twelve clients send wrong passwords at once (gnome-keyring's internal interface): they
    /// are checked one at a time on the throttle's schedule, the ones held back wait without a
    /// thread each, and another client's new collection is made meanwhile.
    @Test func parallelWrongUnlocksAreCheckedOnScheduleAndHoldNoThread() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        _ = try c.library.lock([SecretPath.login])
        let pid = try #require(f.daemonPID)
        let baseline = try #require(Self.threads(of: pid))
        let started = Date()
        let attackers = try ChildProcess("/usr/bin/python3", arguments: ["-c", WrongPasswordFlood.script(count: 12)], environment: f.environment())
        defer { attackers.send(signal: SIGKILL) }
        // Two guesses checked (at once, and a second later): the other ten wait.
        let attempts = f.dataDir + "/login.attempts"
        #expect(eventually(timeout: 30) { WrongPasswordFlood.wrongPasswordsCounted(inAttemptsFile: attempts) >= 2 })
        let waiting = try #require(Self.threads(of: pid))
        #expect(waiting <= baseline + 3, "cofferd went from \(baseline) to \(waiting) threads with ten unlocks waiting")
        // Another client is served meanwhile, its password checked by a free worker.
        let other = try f.newClient()
        let made = try other.library.createCollection(label: "Other", password: SecureBytes(Array("other".utf8)),
                                                      session: try other.library.openSession())
        #expect(try other.isLocked(made) == false)
        let checked = WrongPasswordFlood.wrongPasswordsCounted(inAttemptsFile: attempts)
        // It did not wait behind the held-back guesses: made before the third wait was over.
        #expect(checked <= 3, "the other client's collection was made only after \(checked) guesses were checked")
        let elapsed = Date().timeIntervalSince(started)
        // Checked at 0, 1, 3, 7, 15 … seconds: no more than the schedule allows in the time spent.
        let allowed = Int(log2(elapsed + 1)) + 1
        #expect(checked <= allowed, "\(checked) guesses checked in \(elapsed) s; the schedule allows \(allowed)")
        #expect(checked < 12, "every guess was checked")
    }

    /// The `Threads:` of `/proc/PID/status` (readable although cofferd is non-dumpable).
    static func threads(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
            .flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) }
    }


    @Test func theInternalInterfaceWaitsAndTheWaitSurvivesARestart() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        var c = f.client!
        _ = try c.library.lock([SecretPath.login])
        let session = try c.library.openSession()
        _ = expectDBusError(SecretServiceError.Name.denied) {
            try c.library.unlock(SecretPath.login, password: SecureBytes(Array("wrong".utf8)), session: session)
        }
        for attempt in ["wrong again", "and again"] {
            _ = expectDBusError(SecretServiceError.Name.denied) {
                try c.library.unlock(SecretPath.login, password: SecureBytes(Array(attempt.utf8)), session: session)
            }
        }
        // Three wrong passwords: the next waits four seconds, also for a new daemon.
        _ = f.stopDaemon()
        try f.startDaemon(unlock: false)
        c = f.client!
        let started = Date()
        try c.library.unlock(SecretPath.login, password: SecureBytes(Array(DaemonFixture.loginPassword.utf8)),
                             session: try c.library.openSession())
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(Date().timeIntervalSince(started) >= 2, "a restart forgot the wrong passwords")
    }
}
