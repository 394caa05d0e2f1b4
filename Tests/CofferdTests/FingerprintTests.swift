import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceProtocol
import Testing

/// Within its fingerprint window (of the password), a collection that locked by itself is
/// unlocked by a matching finger on fprintd while the password dialog is up; the password is
/// the fallback for no reader, no enrolled finger and three mismatches, and the only way after
/// an explicit lock or once the window is over.
@Suite(.timeLimit(.minutes(5)), .enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
struct FingerprintTests {
    /// A private system bus with logind and fprintd (`reader`), and cofferd with `pinentry`.
    final class World {
        let logind: FakeLogind
        let fprintd: FakeFprintd
        let f: DaemonFixture

        /// `daemonEnvironment`: added to cofferd's (a test clock).
        init(reader: FakeFprintd.Reader, pinentry: [String], lockSettings: String? = nil, daemonEnvironment: [String: String] = [:]) throws {
            logind = try FakeLogind(sessions: ["c1": getuid()])
            fprintd = try FakeFprintd(on: logind.bus, reader: reader)
            f = try DaemonFixture(pinentry: pinentry, daemonEnvironment: daemonEnvironment, systemBus: logind.bus, lockSettings: lockSettings)
        }

        deinit {
            f.shutdown()
            fprintd.stop()
            logind.stop()
        }

        /// Locks login by itself (the screen locks), then asks to unlock it: whether it was.
        func screenLockThenUnlock() throws -> Bool {
            try AutoLockTests.activateScreenSaver(on: f, "org.gnome.ScreenSaver")
            #expect(AutoLockTests.lockTime(f.client!, since: Date()) != nil)
            return try unlock()
        }

        /// Asks to unlock login through a prompt: whether it was.
        func unlock() throws -> Bool {
            let c = f.client!
            let reply = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login]))
            let (dismissed, _) = try c.runPrompt(reply.prompt)
            let locked = try c.isLocked(SecretPath.login)
            return !dismissed && !locked
        }

        /// Unlocks login with the password alone: fprintd is never asked.
        func expectPasswordOnly(_ why: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try unlock(), sourceLocation: sourceLocation)
            #expect(fprintd.calls.isEmpty, "a finger was asked for \(why): \(fprintd.calls)", sourceLocation: sourceLocation)
        }
    }

    @Test func aMatchingFingerUnlocksAndClosesTheDialog() throws {
        let w = try World(reader: .scans(["verify-match"]), pinentry: ["HANG"])
        #expect(try w.screenLockThenUnlock(), "\(w.f.daemonLog)")
        #expect(w.f.pinentryLogText.contains("Touch the fingerprint reader, or type the password."), "\(w.f.pinentryLogText)")
        #expect(eventually { w.fprintd.calls == ["Claim", "ListEnrolledFingers", "VerifyStart", "VerifyStop", "Release"] }, "\(w.fprintd.calls)")
        // Unlocked for real: the key opens the items.
        #expect(try w.f.client!.secretBytes(of: w.f.client!.quickItem(attributes: ["k": "v"], secret: "s"),
                                            session: w.f.client!.library.openSession()) == Array("s".utf8))
    }

    @Test func threeMismatchesLeaveThePassword() throws {
        let w = try World(reader: .scans(["verify-no-match", "verify-no-match", "verify-no-match"]),
                          pinentry: ["AFTER 4 \(DaemonFixture.loginPassword)"])
        #expect(try w.screenLockThenUnlock(), "\(w.f.daemonLog)")
        let calls = w.fprintd.calls
        #expect(calls.filter { $0 == "VerifyStart" }.count == 3 && calls.last == "Release", "\(calls)")
    }

    @Test(arguments: [FakeFprintd.Reader.none, .noFingers])
    func withoutAReaderOrAFingerThePasswordAlone(reader: FakeFprintd.Reader) throws {
        let w = try World(reader: reader, pinentry: [DaemonFixture.loginPassword])
        #expect(try w.screenLockThenUnlock(), "\(w.f.daemonLog)")
        #expect(!w.f.pinentryLogText.contains("fingerprint"))
        #expect(eventually { w.f.daemonLog.contains("no fingerprint for login:") }, "\(w.f.daemonLog)")
        #expect(!w.fprintd.calls.contains("VerifyStart"))
    }

    @Test func anExplicitLockNeedsThePassword() throws {
        let w = try World(reader: .scans(["verify-match"]), pinentry: [DaemonFixture.loginPassword])
        let c = w.f.client!
        try AutoLockTests.activateScreenSaver(on: w.f, "org.gnome.ScreenSaver")   // a key kept …
        #expect(eventually { w.f.daemonLog.contains("a fingerprint may unlock it again within its window") }, "\(w.f.daemonLog)")
        _ = try c.library.lock([SecretPath.login])   // … and wiped by an explicit lock
        try w.expectPasswordOnly("after an explicit lock")
    }

    @Test func afterLogoutOnlyThePassword() throws {
        let w = try World(reader: .scans(["verify-match"]), pinentry: [DaemonFixture.loginPassword])
        #expect(eventually { w.logind.sessionsListed })
        try AutoLockTests.activateScreenSaver(on: w.f, "org.gnome.ScreenSaver")
        #expect(eventually { w.f.daemonLog.contains("a fingerprint may unlock it again within its window") }, "\(w.f.daemonLog)")
        try w.logind.removeSession("c1")
        #expect(eventually { w.f.daemonLog.contains("kept for a fingerprint was wiped: the user's last login session ended") }, "\(w.f.daemonLog)")
        try w.expectPasswordOnly("after the last session ended")
    }

    @Test func sleepKeepsNoKey() throws {
        let w = try World(reader: .scans(["verify-match"]), pinentry: [DaemonFixture.loginPassword])
        try AutoLockTests.activateScreenSaver(on: w.f, "org.gnome.ScreenSaver")   // a key kept …
        #expect(eventually { w.f.daemonLog.contains("a fingerprint may unlock it again within its window") }, "\(w.f.daemonLog)")
        #expect(eventually { w.logind.inhibitorsHeld == 1 })
        try w.logind.prepareForSleep(true)   // … and wiped before sleep: a hibernation image would hold it
        #expect(eventually { w.logind.inhibitorsHeld == 0 })
        #expect(eventually { w.f.daemonLog.contains("kept for a fingerprint was wiped: the system is going to sleep") }, "\(w.f.daemonLog)")
        try w.logind.prepareForSleep(false)
        try w.expectPasswordOnly("after sleep")
    }

    @Test func pastTheWindowOnlyThePassword() throws {
        let w = try World(reader: .scans(["verify-match"]), pinentry: [DaemonFixture.loginPassword],
                          lockSettings: "[every collection]\nfingerprint-window = 3s\n", daemonEnvironment: DaemonFixture.testClock)
        // Locked by itself within the window: the key is kept, and wiped when the window ends.
        try AutoLockTests.activateScreenSaver(on: w.f, "org.gnome.ScreenSaver")
        #expect(eventually { w.f.daemonLog.contains("a fingerprint may unlock it again within its window") }, "\(w.f.daemonLog)")
        #expect(try !w.f.advanceClock(seconds: 2.9).contains("its fingerprint window is over"), "the window of 3 s ended within 2.9 s")
        #expect(try w.f.advanceClock(seconds: 0.1).contains("its fingerprint window is over"), "\(w.f.daemonLog)")
        let c = w.f.client!
        try w.expectPasswordOnly("past the window")
        // Unlocked by the password again: a new window. Past it, a lock keeps nothing.
        try w.f.advanceClock(seconds: 3.2)
        try AutoLockTests.activateScreenSaver(on: w.f, "org.gnome.ScreenSaver")
        #expect(AutoLockTests.lockTime(c, since: Date()) != nil)
        #expect(!w.f.daemonLog.components(separatedBy: "\n").suffix(3).joined().contains("a fingerprint may unlock"), "\(w.f.daemonLog)")
    }
}
