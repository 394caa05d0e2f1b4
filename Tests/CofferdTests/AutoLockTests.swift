import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Collections lock by themselves: after their idle time, when the screen locks (logind's
/// session `Lock`, a screensaver's `ActiveChanged`), before sleep (logind's `PrepareForSleep`,
/// under a delay inhibitor) and when the user's last session ends — each within a second, on
/// a private bus standing in for the system bus with a logind that speaks the real interface.
@Suite(.timeLimit(.minutes(5))) struct AutoLockTests {
    static let ownUID = getuid()

    /// How long `login` took to lock after `start`, or nil if it did not within `timeout`.
    static func lockTime(_ c: TestClient, since start: Date, timeout: TimeInterval = 5) -> TimeInterval? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? c.isLocked(SecretPath.login)) == true { return Date().timeIntervalSince(start) }
            usleep(20_000)
        }
        return nil
    }

    @Test func idleTimeLocksAndEachUseStartsItAgain() throws {
        let f = try DaemonFixture(daemonEnvironment: DaemonFixture.testClock, lockSettings: "[every collection]\nlock-after-idle = 3s\n")
        defer { f.shutdown() }
        let c = f.client!
        let item = try c.quickItem(attributes: ["app": "idle"], secret: "s")
        let session = try c.library.openSession()
        // Reading a secret is a use: at 1 s intervals, 3 s never pass without one.
        for _ in 0..<4 {
            try f.advanceClock(seconds: 1)
            #expect(try c.secretBytes(of: item, session: session) == Array("s".utf8), "locked although used \(f.daemonLog)")
        }
        c.clearSignals()
        try f.advanceClock(seconds: 2.9)
        #expect(try !c.isLocked(SecretPath.login), "locked 2.9 s after the last use, the idle time being 3 s")
        try f.advanceClock(seconds: 0.1)
        #expect(try c.isLocked(SecretPath.login), "not locked 3 s after the last use, the idle time being 3 s: \(f.daemonLog)")
        // Announced as any lock, with the reason in the log and the audit log.
        #expect(c.waitForSignal("PropertiesChanged", path: SecretPath.login) { signal in
            signal.arguments.dropFirst().first?.dictionaryEntries?.contains { $0.key.string == "Locked" && $0.value.variantValue?.bool == true } == true
        } != nil)
        #expect(c.waitForSignal("PropertiesChanged", path: item) != nil, "the item's Locked was not announced")
        #expect(eventually { f.daemonLog.contains("collection login locked: not used for 3s") }, "\(f.daemonLog)")
        expectLocked(c, item, session)
    }

    /// A secret read fails as locked (the key is gone, not hidden).
    func expectLocked(_ c: TestClient, _ item: ObjectPath, _ session: ClientSession) {
        expectDBusError(SecretServiceError.Name.isLocked) { _ = try c.secretBytes(of: item, session: session) }
    }

    @Test func aCollectionsOwnSettingsBeatEveryCollections() throws {
        let settings = """
        # set by a test
        [every collection]
        lock-after-idle = 1s
        lock-on-screen-lock = yes

        [collection login]
        lock-after-idle = never
        lock-on-screen-lock = no
        """
        let f = try DaemonFixture(daemonEnvironment: DaemonFixture.testClock, lockSettings: settings)
        defer { f.shutdown() }
        let c = f.client!
        try f.advanceClock(seconds: 2.5)
        #expect(try !c.isLocked(SecretPath.login), "login locked although its own settings say never")
        try Self.activateScreenSaver(on: f, "org.gnome.ScreenSaver")
        try Self.expectDecision(f, "the screen locked (org.gnome.ScreenSaver): no unlocked collection's settings say to lock it")
        #expect(try !c.isLocked(SecretPath.login), "login locked on a screen lock although its settings say no")
        // The control: the same file without login's section, read again at the next decision.
        try "[every collection]\nlock-after-idle = 1s\n".write(toFile: f.settingsFile, atomically: true, encoding: .utf8)
        try Self.activateScreenSaver(on: f, "org.gnome.ScreenSaver")
        #expect(Self.lockTime(c, since: Date()) != nil, "the settings file is not read: \(f.daemonLog)")
    }

    /// Waits for cofferd to log `decision` (what it made of a signal that locks nothing).
    static func expectDecision(_ f: DaemonFixture, _ decision: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(eventually { f.daemonLog.contains(decision) }, "cofferd did not say \"\(decision)\": \(f.daemonLog)",
                     sourceLocation: sourceLocation)
    }

    /// Emits `ActiveChanged(active)` as the screensaver owning `interface` (as a bus name) does;
    /// with `owningTheName` false, as an impostor.
    static func activateScreenSaver(on f: DaemonFixture, _ interface: String, active: Bool = true, owningTheName: Bool = true) throws {
        let impostor = owningTheName ? nil : try DBusConnection(address: f.bus.address)
        defer { impostor?.close() }
        let screensaver = try impostor ?? f.screensaver(interface)
        try screensaver.emitSignal(path: "/org/gnome/ScreenSaver", interface: interface, member: "ActiveChanged", arguments: [.boolean(active)])
        // cofferd has received the signal when it answers a call sent after it (in order).
        _ = try screensaver.call(destination: SecretServiceClient.busName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    @Test(arguments: ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"])
    func theScreensaverLocksAndDismissesPendingPrompts(interface: String) throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        try Self.activateScreenSaver(on: f, interface, active: false)   // handled once cofferd answers after it
        #expect(try !c.isLocked(SecretPath.login), "the screensaver going away locked")
        // A prompt waiting (a collection to create) is dismissed by the lock.
        let pending = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Later"), alias: ""))
        #expect(pending.prompt != SecretPath.none)
        let start = Date()
        try Self.activateScreenSaver(on: f, interface)
        let locked = try #require(Self.lockTime(c, since: start), "the screensaver's ActiveChanged(true) did not lock: \(f.daemonLog)")
        #expect(locked <= 1)
        let completed = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: pending.prompt, timeout: 5))
        #expect(completed.arguments.first?.bool == true)
        #expect(eventually { f.daemonLog.contains("locked: the screen locked (\(interface))") }, "\(f.daemonLog)")
    }

    @Test func aScreenLockClosesTheDialogOnScreen() throws {
        let f = try DaemonFixture(pinentry: ["HANG"])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try PromptTests.lockedThenUnlock(c)
        try c.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        #expect(eventually { f.pinentryLogText.contains("GETPIN") }, "the dialog was not shown: \(f.pinentryLogText)")
        let pid = try #require(f.pinentryLogText.split(separator: "\n").first { $0.hasPrefix("PID ") }.flatMap { Int32($0.dropFirst(4)) })
        try Self.activateScreenSaver(on: f, "org.gnome.ScreenSaver")
        let completed = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: prompt, timeout: 3),
                                     "the prompt was not dismissed: \(f.daemonLog)")
        #expect(completed.arguments.first?.bool == true)
        #expect(eventually { kill(pid, 0) != 0 }, "the pinentry still runs")
        #expect(try c.isLocked(SecretPath.login))
    }

    @Test func logindLocksThisUsersSessionOnlyAndTheLastSessionsEnd() throws {
        let logind = try FakeLogind(sessions: ["c1": Self.ownUID, "c7": Self.ownUID + 1])
        defer { logind.stop() }
        let f = try DaemonFixture(systemBus: logind.bus)
        defer { f.shutdown() }
        let c = f.client!
        #expect(eventually { logind.sessionsListed }, "cofferd did not ask logind for the sessions")
        // Another user's screen lock is not ours.
        try logind.lockSession("c7")
        try Self.expectDecision(f, "ignored the Lock of logind session \(FakeLogind.path(ofSession: "c7").rawValue), which is not this user's")
        #expect(try !c.isLocked(SecretPath.login), "another user's session lock locked ours")
        var start = Date()
        try logind.lockSession("c1")
        let locked = try #require(Self.lockTime(c, since: start), "logind's Lock did not lock: \(f.daemonLog)")
        #expect(locked <= 1)
        #expect(eventually { f.daemonLog.contains("locked: the screen locked (logind)") })

        // The session end: a new session of ours, then every one of ours ends.
        try unlockLogin(f)
        try logind.addSession("c9", uid: Self.ownUID)
        try Self.expectDecision(f, "logind session c9 of this user began (2 now)")
        try logind.removeSession("c7")   // another user's
        try logind.removeSession("c1")
        try Self.expectDecision(f, "logind session c1 of this user ended (1 left)")
        #expect(try !c.isLocked(SecretPath.login), "locked while a session of this user remains")
        start = Date()
        try logind.removeSession("c9")
        let ended = try #require(Self.lockTime(c, since: start), "the last session's end did not lock: \(f.daemonLog)")
        #expect(ended <= 1)
        #expect(eventually { f.daemonLog.contains("locked: the user's last login session ended") })
    }

    /// Unlocks login through gnome-keyring's internal interface (no dialog).
    func unlockLogin(_ f: DaemonFixture) throws {
        let c = f.client!
        try c.library.unlock(SecretPath.login, password: SecureBytes(Array(DaemonFixture.loginPassword.utf8)),
                             session: try c.library.openSession())
        #expect(try !c.isLocked(SecretPath.login))
    }

    @Test func sleepLocksUnderADelayInhibitorTakenAgainOnWaking() throws {
        let logind = try FakeLogind(sessions: ["c1": Self.ownUID])
        defer { logind.stop() }
        let f = try DaemonFixture(systemBus: logind.bus)
        defer { f.shutdown() }
        let c = f.client!
        #expect(eventually { logind.inhibitorsHeld == 1 }, "cofferd took no sleep inhibitor: \(f.daemonLog)")
        let start = Date()
        try logind.prepareForSleep(true)
        let locked = try #require(Self.lockTime(c, since: start), "PrepareForSleep(true) did not lock: \(f.daemonLog)")
        #expect(locked <= 1)
        // Let go of only once locked, so the system sleeps with the keys wiped.
        #expect(eventually { logind.inhibitorsHeld == 0 }, "the inhibitor was kept through sleep")
        try logind.prepareForSleep(false)
        #expect(eventually { logind.inhibitorsHeld == 1 }, "no inhibitor taken again after waking")
        #expect(try c.isLocked(SecretPath.login), "waking unlocked")
    }

    @Test func signalsFromAnyoneButLogindAreIgnored() throws {
        let logind = try FakeLogind(sessions: ["c1": Self.ownUID])
        defer { logind.stop() }
        let f = try DaemonFixture(systemBus: logind.bus)
        defer { f.shutdown() }
        let impostor = try DBusConnection(address: logind.bus.address)
        defer { impostor.close() }
        try impostor.emitSignal(path: FakeLogind.managerPath, interface: FakeLogind.manager, member: "PrepareForSleep", arguments: [.boolean(true)])
        try impostor.emitSignal(path: FakeLogind.path(ofSession: "c1"), interface: FakeLogind.session, member: "Lock")
        _ = try impostor.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        try Self.activateScreenSaver(on: f, "org.gnome.ScreenSaver", owningTheName: false)
        for ignored in ["PrepareForSleep", "Lock"] {
            try Self.expectDecision(f, "ignored \(ignored) from \(impostor.uniqueName), which does not own org.freedesktop.login1")
        }
        try Self.expectDecision(f, "ignored ActiveChanged from ")
        #expect(try !f.client!.isLocked(SecretPath.login), "a signal not from the owner of the name it claims locked")
        // The control: the same signals from logind lock.
        try logind.lockSession("c1")
        #expect(Self.lockTime(f.client!, since: Date()) != nil, "logind's own Lock did not lock: \(f.daemonLog)")
    }
}
