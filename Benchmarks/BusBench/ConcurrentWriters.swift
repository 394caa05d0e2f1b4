import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient

/// `--clients N`: N writer processes, each with its own connection and session, create items
/// at once; the aggregate creates per second and the latency percentiles, against one writer
/// alone in the same run. A writer is this program again (`--writer`), so each client is a
/// process of its own as applications are.
enum ConcurrentWriters {
    /// Monotonic nanoseconds: comparable between processes on this machine.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// This process's CPU time so far, in nanoseconds.
    static func cpuTime() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The writer process: `--writer ADDRESS COLLECTION COUNT FIRST GOFILE`. Says `ready`, waits
    /// for GOFILE to exist, creates COUNT items, then prints `span START END CPU` (CPU: the
    /// nanoseconds of CPU it used meanwhile) and, per create, a line `LATENCY FINISHED` (its
    /// latency in µs and when it was answered, in `now()` nanoseconds).
    static func runWriter(_ arguments: [String]) throws -> Never {
        guard arguments.count == 5, let collection = ObjectPath(validating: arguments[1]), let count = Int(arguments[2]),
              let first = Int(arguments[3]) else { Options.usage() }
        let client = try Client(address: arguments[0], collection: collection)
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while !FileManager.default.fileExists(atPath: arguments[4]) { usleep(500) }
        var creates: [String] = []
        let cpuStart = cpuTime()
        let start = now()
        for n in first..<(first + count) {
            let before = now()
            try client.createItem(n, label: "Concurrent")
            let after = now()
            creates.append("\((after - before) / 1000) \(after)")
        }
        let end = now()
        let report = (["span \(start) \(end) \(cpuTime() - cpuStart)"] + creates).joined(separator: "\n") + "\n"
        FileHandle.standardOutput.write(Data(report.utf8))
        exit(0)
    }

    /// What N writers achieved together.
    struct Result {
        var clients: Int
        /// Creates answered while every writer was at work (from the last one's start to the
        /// first one's end), per second: a burst's ragged start and end, when fewer writers
        /// run, are left out.
        var createsPerSecond: Double
        var p50: Double
        var p99: Double
        /// The CPU each watched process (provider, dbus-daemon) used meanwhile, in cores.
        var cpuShare: [Double]
        /// The CPU the writers used together, in cores.
        var clientsShare: Double
        /// The CPU one create took in all (provider, dbus-daemon and its writer), in µs.
        var cpuPerCreate: Double

        /// The creates per second `cores` could do at that cost if they did nothing else: what
        /// no provider of this cost can exceed on the machine, however it schedules its work.
        func ceiling(cores: Int) -> Double { Double(cores) * 1e6 / cpuPerCreate }
    }

    /// Starts `clients` writers of `perClient` items each on the bus at `address` and lets them
    /// go at once.
    static func measure(address: String, collection: ObjectPath, clients: Int, perClient: Int, firstIndex: Int,
                        environment: [String: String], watching pids: [pid_t]) throws -> Result {
        let go = FileManager.default.temporaryDirectory.appendingPathComponent("bus-bench-go-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: go) }
        guard let me = Executables.built("coffer-bus-bench") else { throw BenchError("coffer-bus-bench is not built") }
        let writers = try (0..<clients).map { k in
            try ChildProcess(me, arguments: ["--writer", address, collection.rawValue, "\(perClient)", "\(firstIndex + k * perClient)", go],
                             environment: environment)
        }
        for writer in writers where !writer.waitForStdout(timeout: 60, until: { $0.contains("ready") }) {
            throw BenchError("a writer did not start: \(writer.stderr)")
        }
        let cpuBefore = pids.map(cpuNanoseconds)
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        var starts: [UInt64] = [], ends: [UInt64] = [], latencies: [Double] = [], finishes: [UInt64] = [], clientsCPU = 0.0
        for writer in writers {
            let result = writer.wait(timeout: 600)
            guard result.exitCode == 0 else { throw BenchError("a writer failed: \(result)") }
            for line in result.stdout.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.first == "span", fields.count == 4, let start = UInt64(fields[1]), let end = UInt64(fields[2]),
                   let cpu = Double(fields[3]) {
                    starts.append(start)
                    ends.append(end)
                    clientsCPU += cpu
                } else if fields.count == 2, let latency = Double(fields[0]), let finished = UInt64(fields[1]) {
                    latencies.append(latency)
                    finishes.append(finished)
                }
            }
        }
        let cpuAfter = pids.map(cpuNanoseconds)
        latencies.sort()
        guard let start = starts.min(), let end = ends.max(), let allRunning = starts.max(), let firstDone = ends.min(),
              firstDone > allRunning, !latencies.isEmpty else { throw BenchError("the writers reported nothing") }
        let nanoseconds = Double(end - start)
        let steady = finishes.count { $0 > allRunning && $0 <= firstDone }
        let cpuShare = zip(cpuBefore, cpuAfter).map { ($1 - $0) / nanoseconds }
        return Result(clients: clients, createsPerSecond: Double(steady) / (Double(firstDone - allRunning) / 1e9),
                      p50: latencies[latencies.count / 2], p99: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
                      cpuShare: cpuShare, clientsShare: clientsCPU / nanoseconds,
                      cpuPerCreate: (cpuShare.reduce(0, +) * nanoseconds + clientsCPU) / 1e3 / Double(latencies.count))
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
