import CofferTestSupport
import DBusKit
import Foundation
import Synchronization

/// Why a run could not go on (as opposed to losses, which are counted and reported).
struct TortureError: Error, CustomStringConvertible {
    let description: String
}

/// The torture: rounds of "start cofferd, check the store against the writers' models, let the
/// writers write, SIGKILL cofferd at a random moment", then a last start and check.
final class Torture {
    private let options: Options
    private let daemon: TortureDaemon
    private let writers: [Writer]
    private var random: SeededGenerator
    private(set) var kills = 0
    private(set) var lost: [String] = []
    private(set) var broken: [String] = []
    private(set) var inFlightApplied = 0

    init(options: Options, daemon: TortureDaemon) {
        self.options = options
        self.daemon = daemon
        writers = (0..<options.writers).map { Writer(index: $0, seed: options.seed) }
        random = SeededGenerator(seed: options.seed, stream: 1000)
    }

    /// cofferd ending other than by the torture's SIGKILL, or not stopping cleanly at the end.
    private var daemonFailures: [String] = []

    var operations: Int { writers.reduce(0) { $0 + $1.operations } }
    var acknowledged: Int { writers.reduce(0) { $0 + $1.acknowledged } }
    var unacknowledged: Int { writers.reduce(0) { $0 + $1.unacknowledged } }
    /// Failures of the writers and of the daemon while it ran (not kills).
    var failures: [String] { writers.flatMap(\.failures) + daemonFailures }

    /// Runs every round; throws when cofferd could not be started or read.
    func run(progress: (String) -> Void) throws {
        for round in 1...options.kills {
            try startAndCheck()
            try writeAndKill()
            if round % 50 == 0 || round == options.kills {
                progress("after \(round) kills: \(operations) operations, \(acknowledged) acknowledged, \(lost.count) lost")
            }
        }
        try startAndCheck()
        daemon.send(SIGTERM)
        if let stopped = daemon.reap(), stopped.exitCode != 0 {
            daemonFailures.append("cofferd did not exit 0 on SIGTERM: \(stopped)")
        }
    }

    /// Starts cofferd on the data and compares what it serves with every writer's model.
    private func startAndCheck() throws {
        try daemon.start()
        let actual: [ObjectPath: ItemState]
        do {
            actual = try StoreReader.readLogin(address: daemon.bus.address)
        } catch {
            throw TortureError(description: "reading the store after \(kills) kills failed: \(error); cofferd log:\n\(daemon.log())")
        }
        var byWriter: [String: [ObjectPath: ItemState]] = [:]
        for (path, state) in actual {
            byWriter[state.attributes[Writer.tagAttribute] ?? "", default: [:]][path] = state
        }
        for writer in writers {
            let findings = writer.reconcile(with: byWriter.removeValue(forKey: writer.tag) ?? [:])
            lost += findings.lost.map { "after kill \(kills): \($0)" }
            broken += findings.broken.map { "after kill \(kills): \($0)" }
            if findings.pendingApplied == true { inFlightApplied += 1 }
        }
        for (tag, items) in byWriter {
            broken += items.map { "after kill \(kills): \($0.key) has writer tag '\(tag)' that no writer has: \($0.value)" }
        }
    }

    /// Lets the writers write until cofferd is SIGKILLed at a random moment; waits for them.
    private func writeAndKill() throws {
        let killed = Mutex(false)
        let finished = DispatchGroup()
        let address = daemon.bus.address
        for writer in writers {
            finished.enter()
            Thread.detachNewThread {
                writer.run(address: address, killed: killed)
                finished.leave()
            }
        }
        usleep(useconds_t(Int.random(in: 0...options.maxDelayMilliseconds * 1000, using: &random)))
        if !daemon.isRunning {
            daemonFailures.append("cofferd ended by itself during round \(kills + 1); log:\n\(daemon.log())")
        }
        killed.withLock { $0 = true }
        daemon.send(SIGKILL)
        kills += 1
        let ended = daemon.reap()
        if finished.wait(timeout: .now() + 30) == .timedOut {
            throw TortureError(description: "writers still blocked 30 s after kill \(kills)")
        }
        if let ended, ended.signal != SIGKILL, daemonFailures.isEmpty {
            daemonFailures.append("cofferd did not die of the SIGKILL in round \(kills): \(ended)")
        }
    }
}
