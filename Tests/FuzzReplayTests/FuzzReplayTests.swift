import CofferTestSupport
import Foundation
import FuzzHarness
import Testing

/// Replays, without sanitizers, every committed input of each fuzz target through the same
/// harness the fuzzer runs: the seed corpus (`Fuzz/corpus/<target>/`) and every crash found so
/// far (`Fuzz/regressions/<target>/`). A harness reports a broken promise by trapping.
@Suite struct FuzzReplayTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    /// Regressions whose bug is not fixed yet, with where it is: replaying them is a known
    /// issue. Remove an entry with the fix (the test then fails until you do).
    static let unfixed: [String: String] = [:]

    /// `<target>/<file>` for every committed regression.
    static var regressions: [String] {
        FuzzTarget.all.flatMap { target in
            let folder = "\(fuzzFolder)/regressions/\(target.name)"
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return files.sorted().map { "\(target.name)/\($0)" }
        }
    }

    /// The seeds run in this process: none of them may crash, or the fuzzer could not start.
    @Test(arguments: FuzzTarget.all.map(\.name))
    func seedCorpusReplays(_ name: String) throws {
        let target = try #require(FuzzTarget.all.first { $0.name == name })
        let corpus = try FuzzReplayer.inputFiles("\(Self.fuzzFolder)/corpus/\(name)")
        #expect(!corpus.isEmpty, "no seed corpus for \(name)")
        for file in corpus {
            target.run(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        }
    }

    /// The seed generators still work against today's code (the committed corpus came from them).
    @Test(arguments: FuzzTarget.all.map(\.name))
    func freshSeedsReplay(_ name: String) throws {
        let target = try #require(FuzzTarget.all.first { $0.name == name })
        let seeds = try target.seeds()
        #expect(seeds.count >= 5)
        for seed in seeds { target.run(seed.bytes) }
    }

    /// Each regression runs in a child process (the target's replay executable, built beside
    /// this test bundle), so that a crash fails this test instead of ending the test run.
    @Test(arguments: regressions)
    func regressionDoesNotCrash(_ regression: String) throws {
        let target = String(regression.prefix { $0 != "/" })
        let child = try ChildProcess(target, arguments: ["\(Self.fuzzFolder)/regressions/\(regression)"],
                                     environment: ["SWIFT_BACKTRACE": "enable=no"])
        let result = child.wait(timeout: 60)
        if let bug = Self.unfixed[regression] {
            withKnownIssue(Comment(rawValue: bug)) {
                #expect(result.succeeded, "\(regression): \(result)")
            }
        } else {
            #expect(result.succeeded, "\(regression): \(result)")
        }
    }
}
