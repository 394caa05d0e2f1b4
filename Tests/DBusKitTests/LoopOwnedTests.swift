import CofferTestSupport
import DBusKit
import Synchronization
import Testing

/// Loop-owned state is reached on the loop thread (work posted there from anywhere), and a
/// debug build traps when another thread reaches for it while the loop runs.
@Suite(.timeLimit(.minutes(2))) struct LoopOwnedTests {
    @Test func workPostedFromOtherThreadsReachesItOnTheLoop() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let counter = LoopOwned(0, on: h.server)
        counter.value = 1   // before the loop runs: setting up
        h.startServer()
        let seen = Mutex<[Int]>([])
        for _ in 0..<3 {
            h.server.post {
                counter.value += 1
                seen.withLock { $0.append(counter.value) }
            }
        }
        #expect(eventually { seen.withLock { $0 } == [2, 3, 4] })
    }

    #if DEBUG
    @Test func anotherThreadTrapsWhileTheLoopRuns() async {
        await #expect(processExitsWith: .failure) {
            let h = try Harness()
            let owned = LoopOwned(0, on: h.server)
            h.startServer()
            let running = Atomic<Bool>(false)
            h.server.post { running.store(true, ordering: .relaxed) }
            _ = eventually { running.load(ordering: .relaxed) }
            _ = owned.value   // from the test's thread, while the loop runs: traps
        }
    }
    #endif
}
