import CofferTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// An idle cofferd sleeps: once its writes are done, those that failed included, nothing
/// wakes it (a write's follow-up has the loop look every millisecond only while it is under way).
@Suite(.timeLimit(.minutes(10))) struct IdleTests {
    /// The context switches of all of cofferd's threads so far.
    static func contextSwitches(of pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return sum + status.split(separator: "\n").reduce(0) { count, line in
                guard line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") else { return count }
                return count + (Int(line.split(separator: "\t").last ?? "") ?? 0)
            }
        }
    }

    @Test func cofferdSleepsAfterWritesThatSucceededAndFailed() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let pid = try #require(f.daemonPID)
        let c = f.client!
        let session = try c.library.openSession(.plain)
        let items = try (0..<20).map { n in
            try c.createItem(label: "idle \(n)", attributes: ["idle": "\(n)"], secret: "s", session: session)
        }
        // Two clients delete the same items at once: a delete that comes while the other is
        // under way fails in the writer, the rest when they are dispatched.
        let deleters = try (0..<2).map { _ in try f.newClient() }
        let deleted = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: deleters.count) { k in
            for item in items where (try? deleters[k].library.deleteItem(item)) != nil {
                deleted.withLock { $0 += 1 }
            }
        }
        #expect(deleted.withLock { $0 } >= items.count, "\(f.daemonLog)")

        usleep(300_000)
        let before = Self.contextSwitches(of: pid)
        usleep(1_000_000)
        let woken = Self.contextSwitches(of: pid) - before
        #expect(woken < 50, "cofferd's threads were switched to \(woken) times in a second with nothing to do")
    }
}
