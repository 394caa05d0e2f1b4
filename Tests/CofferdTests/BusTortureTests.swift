import CofferTestSupport
import Foundation
import Testing

/// The crash test through the real daemon, short: `coffer-torture` SIGKILLs cofferd 30 times
/// under two writers and checks every acknowledged write after each restart. `scripts/torture`
/// runs the long version. `COFFER_TORTURE_SEED` replaces the seed.
@Suite(.timeLimit(.minutes(6))) struct BusTortureTests {
    static let kills = 30

    @Test func acknowledgedWritesSurviveSIGKILLs() throws {
        let tool = try #require(Executables.built("coffer-torture"), "coffer-torture is not built next to the tests")
        let seed = ProcessInfo.processInfo.environment["COFFER_TORTURE_SEED"] ?? "8"
        let child = try ChildProcess(tool, arguments: ["--kills", "\(Self.kills)", "--writers", "2", "--seed", seed,
                                                       "--cofferd", try DaemonFixture.cofferdPath])
        // About 20 s alone, much longer beside the whole suite on two cores. SIGTERM (not
        // SIGKILL) if it overruns: the tool then kills its cofferd and bus.
        let summarized = child.waitForStdout(timeout: 300) { $0.contains(" lost: ") }
        let result = summarized ? child.wait(timeout: 20) : child.terminate(grace: 10)
        let output = "seed \(seed): \(result)"
        #expect(summarized, "no summary in time; \(output)")
        #expect(result.exitCode == 0, "\(output)")

        let summary = try #require(result.stdout.firstMatch(of: /kills: (\d+), operations: (\d+), acknowledged: (\d+), lost: (\d+)/),
                                   "\(output)")
        let (kills, operations, acknowledged, lost) = (Int(summary.1)!, Int(summary.2)!, Int(summary.3)!, Int(summary.4)!)
        #expect(lost == 0, "\(output)")
        #expect(kills == Self.kills, "\(output)")
        #expect(operations >= 100, "the writers hardly wrote: \(output)")
        // Each kill leaves at most one write per writer without its reply.
        #expect(acknowledged >= operations - 2 * kills && acknowledged <= operations, "\(output)")
    }
}
