import CofferCore
import Dispatch
import Synchronization
import SecretServiceProtocol
import SystemKit

/// Runs the password checks cofferd's clients ask for over the bus — unlocking with a password,
/// changing one, making a collection with one: each an Argon2id derivation of 64 MiB — so that
/// no client can use up what others need:
///
/// - at most `workers` run at once, on threads of their own (memory and CPU stay bounded);
/// - for one collection, one check at a time (the store's throttle then counts every guess);
/// - a check the unlock throttle holds back waits on a timer, holding no thread, and runs when
///   the wait is over;
/// - an application (all its connections together: opening more buys no more) has at most
///   `maxPendingPerApplication` checks waiting, and all at most `maxPending`: past that a check
///   is refused at once (LimitsExceeded);
/// - the checks of a client that left the bus are dropped unrun.
final class PasswordChecks: Sendable {
    static let workers = 2
    static let maxPendingPerApplication = 8
    static let maxPending = 256

    /// One check: `work` runs on a worker, and may throw `CofferError.throttled` to wait and
    /// run again; `done` gets its outcome (not called for a client that left).
    struct Check: Sendable {
        /// The connection asking.
        let client: String
        /// Whose quota it counts against: its application (its unique name when it cannot be told).
        let requester: String
        let collection: CollectionID?
        let work: @Sendable () throws -> Void
        let done: @Sendable (Result<Void, any Error>) -> Void
    }

    private struct State {
        /// Checks ready to run, in the order they became ready.
        var ready: [Check] = []
        /// The collections with a check under way (running, or waiting on a timer), and the
        /// checks queued behind it, in order.
        var queued: [CollectionID: [Check]] = [:]
        /// Checks waiting or running, per requester and per client.
        var perRequester: [String: Int] = [:]
        var perClient: [String: Int] = [:]
        var departed: Set<String> = []
    }

    private let state = Mutex(State())
    private let readySignal = DispatchSemaphore(value: 0)
    /// How many seconds the unlock throttle holds `collection` back now.
    private let secondsLeft: @Sendable (CollectionID) -> UInt64

    init(secondsLeft: @escaping @Sendable (CollectionID) -> UInt64) {
        self.secondsLeft = secondsLeft
        for n in 0..<Self.workers { Threads.start(name: "password \(n)") { [self] in work() } }
    }

    /// Takes `check`; throws when its client, or everyone, has too many waiting.
    func submit(_ check: Check) throws(SecretServiceError) {
        let start = try state.withLock { state throws(SecretServiceError) -> Bool in
            guard state.perRequester[check.requester, default: 0] < Self.maxPendingPerApplication else {
                throw .limitsExceeded("an application may have at most \(Self.maxPendingPerApplication) password checks waiting; wait for their answers")
            }
            guard state.perClient.values.reduce(0, +) < Self.maxPending else {
                throw .limitsExceeded("\(Self.maxPending) password checks are waiting; try again once some are done")
            }
            state.perRequester[check.requester, default: 0] += 1
            state.perClient[check.client, default: 0] += 1
            guard let collection = check.collection else { return true }
            if state.queued[collection] != nil {
                state.queued[collection]!.append(check)
                return false
            }
            state.queued[collection] = []
            return true
        }
        if start { begin(check) }
    }

    /// Drops the checks of a client that left the bus (those not yet run).
    func forget(_ client: String) {
        state.withLock { state in
            if state.perClient[client] != nil { state.departed.insert(client) }
        }
    }

    /// How many checks are waiting, or running (for tests and the log).
    var waiting: Int { state.withLock { $0.perClient.values.reduce(0, +) } }

    /// Starts `check`, whose collection has no other check under way: on a timer while the
    /// throttle holds it back, else on a worker.
    private func begin(_ check: Check) {
        if let collection = check.collection, !isDeparted(check.client) {
            let seconds = secondsLeft(collection)
            if seconds > 0 {
                Clock.source.after(milliseconds: seconds * 1000) { [self] in begin(check) }
                return
            }
        }
        state.withLock { $0.ready.append(check) }
        readySignal.signal()
    }

    private func isDeparted(_ client: String) -> Bool {
        state.withLock { $0.departed.contains(client) }
    }

    /// A worker: runs ready checks, one at a time.
    private func work() -> Never {
        while true {
            readySignal.wait()
            guard let check = state.withLock({ $0.ready.isEmpty ? nil : $0.ready.removeFirst() }) else { continue }
            if isDeparted(check.client) {
                finish(check, nil)
                continue
            }
            do {
                try check.work()
                finish(check, .success(()))
            } catch CofferError.throttled(_, let seconds) {
                // Held back meanwhile (another process over the same files): wait, then again.
                Clock.source.after(milliseconds: max(seconds, 1) * 1000) { [self] in begin(check) }
            } catch {
                finish(check, .failure(error))
            }
        }
    }

    /// Answers `check` (unless its client left: `outcome` nil) and starts the next one queued
    /// for its collection.
    private func finish(_ check: Check, _ outcome: Result<Void, any Error>?) {
        let (next, departed) = state.withLock { state -> (Check?, Bool) in
            let departed = state.departed.contains(check.client)
            state.perRequester[check.requester, default: 1] -= 1
            if state.perRequester[check.requester] == 0 { state.perRequester[check.requester] = nil }
            state.perClient[check.client, default: 1] -= 1
            if state.perClient[check.client] == 0 {
                state.perClient[check.client] = nil
                state.departed.remove(check.client)
            }
            guard let collection = check.collection else { return (nil, departed) }
            if var queue = state.queued[collection], !queue.isEmpty {
                let next = queue.removeFirst()
                state.queued[collection] = queue
                return (next, departed)
            }
            state.queued[collection] = nil
            return (nil, departed)
        }
        if let outcome, !departed { check.done(outcome) }
        if let next { begin(next) }
    }
}
