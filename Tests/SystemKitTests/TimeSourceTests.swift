import Synchronization
import SystemKit
import Testing

/// A manual clock stands still until advanced, and fires each timer it passes, in order, on
/// the advancing thread; the system's clocks fire theirs by themselves.
struct TimeSourceTests {
    @Test func aManualClockFiresWhatItPassesInOrderAndNothingBefore() {
        let clock = TimeSource.manual(at: 1_000_000)
        let fired = Mutex<[String]>([])
        clock.after(milliseconds: 3000) { fired.withLock { $0.append("3 s") } }
        clock.after(milliseconds: 1000) { fired.withLock { $0.append("1 s") } }
        clock.after(milliseconds: 1000) { fired.withLock { $0.append("1 s, set later") } }
        clock.after(milliseconds: 2000) {
            fired.withLock { $0.append("2 s") }
            clock.after(milliseconds: 0) { fired.withLock { $0.append("set at 2 s, due at once") } }
        }
        #expect(clock.isManual)
        #expect(clock.milliseconds == 1_000_000 && clock.seconds == 1000 && clock.elapsedMilliseconds == 1_000_000)
        clock.advance(by: 999)
        #expect(fired.withLock { $0 }.isEmpty)
        clock.advance(by: 1001)
        #expect(fired.withLock { $0 } == ["1 s", "1 s, set later", "2 s", "set at 2 s, due at once"])
        #expect(clock.milliseconds == 1_002_000)
        clock.advance(by: 60_000)
        #expect(fired.withLock { $0 }.last == "3 s")
        clock.advance(by: .max)   // the end of time: saturates, fires nothing twice
        #expect(fired.withLock { $0 }.count == 5 && clock.milliseconds == .max)
    }

    @Test func theSystemClocksReadTheSystemAndFireByThemselves() async {
        let clock = TimeSource.system
        #expect(!clock.isManual)
        #expect(clock.seconds > 1_700_000_000)
        let before = clock.elapsedMilliseconds
        clock.advance(by: 3_600_000)   // does nothing to the system's clocks
        #expect(clock.elapsedMilliseconds - before < 3_600_000)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            clock.after(milliseconds: 20) { done.resume() }
        }
        #expect(clock.elapsedMilliseconds - before >= 20)
    }
}
