import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import Testing

/// Wrong passwords hold back the next unlock: 1, 2, 4 … seconds, at most 5 minutes, seen by
/// every process over the same store, and cleared by the right password.
@Suite(.timeLimit(.minutes(5))) struct UnlockThrottleTests {
    @Test func theWaitDoublesFromOneSecondToFiveMinutes() {
        #expect((0...10).map { UnlockThrottle.wait(afterFailures: UInt32($0)) } == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300])
        #expect(UnlockThrottle.wait(afterFailures: .max) == 300)
    }

    @Test func aWrongPasswordHoldsBackTheNextForEveryProcessUntilTheRightOneClearsIt() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.lock(work)

        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("wrong")) }
        // Within the second that follows, not even the right password is checked …
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try keychain.unlock(work, password: password("pw")) }
        // … by this process or another over the same files (a restart, the CLI, PAM).
        let other = try fixture.keychain()
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try other.unlock(work, password: password("pw")) }
        #expect(try keychain.info(work).isLocked)

        Thread.sleep(forTimeInterval: 1.1)
        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(work, password: password("again wrong")) }
        #expect(throws: CofferError.throttled("work", seconds: 2)) { try keychain.unlock(work, password: password("pw")) }
        // Waiting it out (as the daemon's dialogs and coffer do), the password is then checked.
        var announced: [UInt64] = []
        let right = try password("pw")
        try Keychain.waitingOutThrottle(announce: { announced.append($0) }) { () throws(CofferError) in
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

    @Test func theWaitIsCountedInMillisecondsAndNeverLongerThanFiveMinutes() throws {
        let fixture = try StoreFixture()
        _ = try fixture.keychain()   // makes the store directory
        let throttle = UnlockThrottle(directory: fixture.directory, collection: work)
        let t: UInt64 = 1_800_000_000_000   // milliseconds: January 2027
        try throttle.recordFailure(at: t + 999)
        // A wrong password late in a second still holds back the next for a whole second.
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try throttle.check(at: t + 1000) }
        #expect(throttle.secondsLeft(at: t + 1998) == 1)
        #expect(throttle.secondsLeft(at: t + 1999) == 0)
        try throttle.check(at: t + 1999)
        // Coffer 0.3.0 wrote seconds: read as such after an upgrade, the wait is kept.
        throttle.reset()
        try throttle.recordFailure(at: 1_800_000_000)
        #expect(throttle.secondsLeft(at: t + 500) == 1)
        // A failure stamped far ahead (the clock was set back since) waits five minutes, not forever.
        try throttle.recordFailure(at: .max - 5)
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
