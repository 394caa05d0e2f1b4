import Foundation
import FuzzHarness
import Testing

/// Replays, without sanitizers, every committed input of each fuzz target through the same
/// harness the fuzzer runs: the seed corpus (`Fuzz/corpus/<target>/`) and every crash found
/// so far (`Fuzz/regressions/<target>/`). A harness reports a broken promise by trapping,
/// so a regression fails this test run the way it crashed the fuzzer.
@Suite struct FuzzReplayTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    @Test(arguments: FuzzTarget.all.map(\.name))
    func committedInputsReplay(_ name: String) throws {
        let target = try #require(FuzzTarget.all.first { $0.name == name })
        let corpus = try FuzzReplayer.inputFiles("\(Self.fuzzFolder)/corpus/\(name)")
        #expect(!corpus.isEmpty, "no seed corpus for \(name)")
        let regressionFolder = "\(Self.fuzzFolder)/regressions/\(name)"
        let regressions = FileManager.default.fileExists(atPath: regressionFolder)
            ? try FuzzReplayer.inputFiles(regressionFolder) : []
        for file in corpus + regressions {
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
}
