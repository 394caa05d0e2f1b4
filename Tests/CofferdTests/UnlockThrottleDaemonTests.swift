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
