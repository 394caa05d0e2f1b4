import CofferCore
import DBusKit
import SecretServiceProtocol

/// Locks unlocked collections by themselves, as their `LockSettings` say: after their idle
/// time without a secret read or written, when the screen locks, before the system sleeps,
/// and when the user's last session ends. Locking wipes the key, dismisses the prompts
/// pending, closes the dialogs on screen, and is announced like any other lock.
///
/// Loop thread only (its state is `LoopOwned`). One timer at a time, set for the earliest idle
/// deadline (and at most a minute ahead, so that changed settings apply within a minute).
final class AutoLock: Sendable {
    /// Why collections lock.
    enum Trigger: Equatable, CustomStringConvertible {
        case idle(seconds: UInt64)
        case screenLocked(by: String)
        case sleep
        case sessionEnded

        var description: String {
            switch self {
            case .idle(let seconds): "not used for \(DurationText.describe(seconds))"
            case .screenLocked(let by): "the screen locked (\(by))"
            case .sleep: "the system is going to sleep"
            case .sessionEnded: "the user's last login session ended"
            }
        }
    }

    private unowned let server: SecretServer
    private let settings: @Sendable () -> LockConfiguration

    private struct State {
        var lastUse: [CollectionID: UInt64] = [:]
        /// When each collection was last unlocked with its password: its fingerprint window starts.
        var passwordUnlock: [CollectionID: UInt64] = [:]
        /// The deadline the timer is set for, and its number (a fired timer that is not the latest does nothing).
        var timer: (deadline: UInt64, number: UInt64)?
        var timers: UInt64 = 0
    }
    private let state: LoopOwned<State>
    private var lastUse: [CollectionID: UInt64] {
        get { state.value.lastUse }
        _modify { yield &state.value.lastUse }
    }
    private var passwordUnlock: [CollectionID: UInt64] {
        get { state.value.passwordUnlock }
        _modify { yield &state.value.passwordUnlock }
    }
    private var timer: (deadline: UInt64, number: UInt64)? {
        get { state.value.timer }
        _modify { yield &state.value.timer }
    }
    private var timers: UInt64 {
        get { state.value.timers }
        _modify { yield &state.value.timers }
    }

    /// The longest the timer is set ahead, in milliseconds.
    static let recheck: UInt64 = 60_000

    /// Now, in milliseconds on the process's clock (`Clock.source`) that never goes back.
    private var now: UInt64 { Clock.source.elapsedMilliseconds }

    /// `seconds` after `time` (milliseconds), or the end of time for a setting too long to count.
    private static func time(_ time: UInt64, plus seconds: UInt64) -> UInt64 {
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, overflowToo) = time.addingReportingOverflow(milliseconds)
        return overflow || overflowToo ? .max : sum
    }

    /// - settings: the lock settings as they are now (read from the settings file).
    init(server: SecretServer, settings: @escaping @Sendable () -> LockConfiguration) {
        self.server = server
        self.settings = settings
        state = LoopOwned(State(), on: server.connection)
    }

    /// Starts counting idle time for the collections unlocked now.
    func start() {
        let now = self.now
        for id in unlockedCollections() {
            lastUse[id] = now
            passwordUnlock[id] = now   // by cofferd --unlock
        }
        schedule()
    }

    /// `id` was unlocked with its password (not a fingerprint): its fingerprint window starts.
    func unlockedWithPassword(_ id: CollectionID) {
        passwordUnlock[id] = now
    }

    /// Whether `id` may be unlocked with a fingerprint now: it locked by itself keeping its
    /// key, within its fingerprint window of the password.
    func fingerprintMayUnlock(_ id: CollectionID) -> Bool {
        guard server.keychain.hasKeptKey(id), let window = settings().settings(for: id).fingerprintWindowSeconds,
              let since = passwordUnlock[id] else { return false }
        return now < Self.time(since, plus: window)
    }

    /// A secret of `id` was read or written, or it was unlocked: its idle time starts again.
    func used(_ id: CollectionID) {
        let now = self.now
        // Tracked already (and so in the timer's reckoning): a use only moves its deadline later.
        guard lastUse.updateValue(now, forKey: id) == nil || timer == nil else { return }
        let idle = settings().settings(for: id).idleSeconds.map { Self.time(now, plus: $0) }
        if timer == nil || idle.map({ $0 < timer!.deadline }) == true { schedule() }
    }

    /// `id` locked (by anyone): its idle time is no longer counted.
    func locked(_ id: CollectionID) {
        lastUse[id] = nil
    }

    /// Locks every unlocked collection whose settings say to on `trigger` (all of them when the
    /// session ended).
    func lock(on trigger: Trigger) {
        let configuration = settings()
        let targets = unlockedCollections().filter { id in
            let settings = configuration.settings(for: id)
            switch trigger {
            case .idle: return false
            case .screenLocked: return settings.onScreenLock
            case .sleep: return settings.onSuspend
            case .sessionEnded: return true
            }
        }
        if trigger == .sessionEnded || trigger == .sleep {
            // Never past logout or through sleep: also the keys kept by collections locked before.
            for id in (try? server.keychain.collectionIDs()) ?? [] where server.keychain.hasKeptKey(id) {
                server.keychain.forgetKeptKey(id)
                server.log("collection \(id): the key kept for a fingerprint was wiped: \(trigger)")
            }
        }
        if targets.isEmpty { server.log("\(trigger): no unlocked collection's settings say to lock it") }
        lock(targets, because: trigger)
        schedule()   // a kept key's window may end before the next timer
    }

    /// Locks the collections idle for their idle time; sets the timer for the next.
    private func check() {
        timer = nil
        let configuration = settings()
        let now = self.now
        for (id, deadline) in keptKeyDeadlines(configuration) where deadline <= now {
            server.keychain.forgetKeptKey(id)
            server.log("collection \(id): its fingerprint window is over; only the password unlocks it now")
        }
        for id in unlockedCollections() {
            guard let idle = configuration.settings(for: id).idleSeconds else { continue }
            let since = lastUse[id] ?? now
            lastUse[id] = since
            if now >= Self.time(since, plus: idle) { lock([id], because: .idle(seconds: idle)) }
        }
        schedule()
    }

    /// Also when nothing was unlocked, a screen lock, sleep or logout closes the dialogs: the
    /// user is away from them. An idle lock leaves them: the user may be typing in one.
    private func lock(_ ids: [CollectionID], because trigger: Trigger) {
        if case .idle = trigger, ids.isEmpty { return }
        let configuration = settings()
        let now = self.now
        for id in ids {
            // Within the fingerprint window the key is kept for a fingerprint; never through
            // sleep (a hibernation image would hold it) nor past logout.
            let window = configuration.settings(for: id).fingerprintWindowSeconds
            let mayKeep = trigger != .sessionEnded && trigger != .sleep
            let keep = mayKeep && window.map { w in passwordUnlock[id].map { now < Self.time($0, plus: w) } ?? false } ?? false
            server.lockCollection(id, because: trigger.description, keepingKey: keep)
            lastUse[id] = nil
        }
        // Away from the screen, or asleep: nobody is at the dialogs. Idle: someone may be.
        if case .idle = trigger { return }
        server.dismissPromptsAndDialogs()
    }

    /// Sets the timer for the earliest idle deadline (at most `recheck` ahead), if any
    /// collection is unlocked.
    private func schedule() {
        let unlocked = unlockedCollections()
        let configuration = settings()
        let kept = keptKeyDeadlines(configuration)
        guard !unlocked.isEmpty || !kept.isEmpty else {
            timer = nil
            return
        }
        let now = self.now
        var deadline = kept.values.reduce(now + Self.recheck, min)
        for id in unlocked {
            guard let idle = configuration.settings(for: id).idleSeconds else { continue }
            deadline = min(deadline, Self.time(lastUse[id] ?? now, plus: idle))
        }
        timers += 1
        let number = timers
        timer = (deadline, number)
        let connection = server.connection
        Clock.source.after(milliseconds: deadline > now ? deadline - now : 0) { [weak self] in
            connection.post { [weak self] in
                guard let self, self.timer?.number == number else { return }
                self.check()
            }
        }
    }

    /// When each kept key's fingerprint window ends.
    private func keptKeyDeadlines(_ configuration: LockConfiguration) -> [CollectionID: UInt64] {
        var deadlines: [CollectionID: UInt64] = [:]
        for id in (try? server.keychain.collectionIDs()) ?? [] where server.keychain.hasKeptKey(id) {
            let window = configuration.settings(for: id).fingerprintWindowSeconds
            deadlines[id] = window.flatMap { w in passwordUnlock[id].map { Self.time($0, plus: w) } } ?? now
        }
        return deadlines
    }

    private func unlockedCollections() -> [CollectionID] {
        ((try? server.keychain.collectionIDs()) ?? []).filter { id in
            id != .session && (try? server.keychain.info(id).isLocked) == false
        }
    }
}
