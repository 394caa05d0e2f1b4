import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import Synchronization
import SystemKit
import Testing

/// Wrong passwords hold back the next unlock: 1, 2, 4 … seconds, at most 5 minutes, seen by
/// every process over the same store, and cleared by the right password.
@Suite(.timeLimit(.minutes(5))) struct UnlockThrottleTests {
    @Test func theWaitDoublesFromOneSecondToFiveMinutes() {
        #expect((0...10).map { UnlockThrottle.wait(afterFailures: UInt32($0)) } == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300])
        #expect(UnlockThrottle.wait(afterFailures: .max) == 300)
    }

    /// A keychain over `fixture`'s files whose throttle reads `clock`.
    static func keychain(_ fixture: StoreFixture, clock: TimeSource) throws -> Keychain {
        Keychain(provider: try FileStore(directory: fixture.directory, kdf: .testing, watchChanges: true, warn: { _ in },
                                         beforeFlush: {}, clock: clock))
    }

    @Test func aWrongPasswordHoldsBackTheNextForEveryProcessUntilTheRightOneClearsIt() throws {
        let fixture = try StoreFixture()
        let clock = TimeSource.manual(at: 1_800_000_000_000)
        let keychain = try Self.keychain(fixture, clock: clock)
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.lock(work)

        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("wrong")) }
        // Within the second that follows, not even the right password is checked …
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try keychain.unlock(work, password: password("pw")) }
        // … by this process or another over the same files (a restart, the CLI, PAM).
        let other = try Self.keychain(fixture, clock: clock)
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try other.unlock(work, password: password("pw")) }
        #expect(try keychain.info(work).isLocked)

        clock.advance(by: 999)
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try keychain.unlock(work, password: password("pw")) }
        clock.advance(by: 1)
        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("again wrong")) }
        #expect(throws: CofferError.throttled("work", seconds: 2)) { try keychain.unlock(work, password: password("pw")) }
        // Waiting it out (as the daemon's dialogs and coffer do), the password is then checked.
        var announced: [UInt64] = []
        let right = try password("pw")
        try Keychain.waitingOutThrottle(clock: clock, announce: { seconds in
            announced.append(seconds)
            clock.advance(by: seconds * 1000)
        }) { () throws(CofferError) in
            try keychain.unlock(work, password: right)
        }
        #expect(announced == [2])
        #expect(try !keychain.info(work).isLocked)

        // Cleared: one wrong password waits one second again, not four.
        try keychain.lock(work)
        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("wrong")) }
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try keychain.unlock(work, password: password("pw")) }
        // A password change is held back the same way.
        #expect(throws: CofferError.throttled("work", seconds: 1)) {
            try keychain.changePassword(work, from: password("pw"), to: password("new"))
        }
        let attempts = fixture.directory + "/work" + UnlockThrottle.fileExtension
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: attempts)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }

    /// Wrong passwords given at once, from many threads and two keychains over the same files,
    /// are checked one at a time: the first wrong one holds the others back, so one guess is
    /// checked, not one per thread.
    @Test func parallelWrongPasswordsAreCheckedOneAtATime() throws {
        let fixture = try StoreFixture()
        let keychains = [try fixture.keychain(), try fixture.keychain()]
        try keychains[0].createCollection(label: "Work", id: work, password: password("pw"))
        try keychains[0].lock(work)
        _ = try keychains[1].info(work)
        let outcomes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { n in
            let outcome: String
            do {
                try keychains[n % 2].unlock(work, password: try password("wrong \(n)"))
                outcome = "unlocked"
            } catch CofferError.authenticationFailed {
                outcome = "checked"
            } catch CofferError.throttled {
                outcome = "held back"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let all = outcomes.withLock { $0 }
        #expect(all.filter { $0 == "checked" }.count == 1 && all.filter { $0 == "held back" }.count == 7, "\(all)")
    }

    @Test func theWaitIsCountedInMillisecondsAndNeverLongerThanFiveMinutes() throws {
        let fixture = try StoreFixture()
        _ = try fixture.keychain()   // makes the store directory
        let throttle = UnlockThrottle(directory: fixture.directory, collection: work)
        let t: UInt64 = 1_800_000_000_000   // milliseconds: January 2027
        let wrong = { () throws(CofferError) -> Bool? in nil }
        let right = { () throws(CofferError) -> Bool? in true }
        #expect(throws: CofferError.authenticationFailed) { try throttle.attempt(at: { t + 999 }, wrong) }
        // A wrong password late in a second still holds back the next for a whole second.
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try throttle.attempt(at: { t + 1000 }, right) }
        #expect(throttle.secondsLeft(at: t + 1998) == 1)
        #expect(throttle.secondsLeft(at: t + 1999) == 0)
        #expect(try throttle.attempt(at: { t + 1999 }, right) == true)
        #expect(throttle.secondsLeft(at: t + 1999) == 0, "the right password clears the count")
        // Coffer 0.3.0 wrote seconds: read as such after an upgrade, the wait is kept.
        #expect(throws: CofferError.authenticationFailed) { try throttle.attempt(at: { 1_800_000_000 }, wrong) }
        #expect(throttle.secondsLeft(at: t + 500) == 1)
        // A failure stamped far ahead (the clock was set back since) waits five minutes, not forever.
        throttle.reset()
        #expect(throws: CofferError.authenticationFailed) { try throttle.attempt(at: { .max - 5 }, wrong) }
        #expect(throttle.secondsLeft(at: 0) == UnlockThrottle.maxWait)
        throttle.reset()
        #expect(throttle.secondsLeft(at: 0) == 0)
    }

    @Test func aCollectionMadeAgainUnderTheSameIDStartsClean() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.lock(work)
        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("wrong")) }
        try keychain.deleteCollection(work)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/work" + UnlockThrottle.fileExtension))
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.lock(work)
        try keychain.unlock(work, password: password("pw"))
    }
}
