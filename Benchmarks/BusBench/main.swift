// coffer-bus-bench: the Secret Service over a real bus, for N items, Coffer beside
// gnome-keyring when it is installed.
//
// Each provider runs on its own private dbus-daemon with a fresh data directory, unlocked
// with --unlock. A client (SecretServiceClient, with a dh-ietf1024 session as libsecret uses) fills the
// default collection to N items with CreateItem, then times single calls and reports medians
// (µs), the CPU time the provider and the bus daemon spent per call (from
// /proc/PID/task/*/schedstat), the provider's RSS, and the ratio gnome-keyring / Coffer. Run a
// release build:
//
//   swift build -c release && .build/release/coffer-bus-bench [--sizes 1000,10000] [--samples 100]
//
// With --clients N, also N writer processes creating items at once against one writer alone
// (aggregate creates per second, latency p50/p99, and the CPU share of the provider and of
// dbus-daemon, which is single-threaded).
//
// With --repeat R, every provider is measured R times, taking turns (coffer, the bare
// provider, …, then coffer again), and each figure is the median of the R runs; the targets
// also show the lowest and highest run. On a shared machine a slow spell lasting minutes falls
// on one provider's run; over several turns it weighs on all alike.
import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol

let defaultCollection = SecretPath.aliases.appending(escaping: "default")
let sessionCollection = SecretPath.collection(named: "session")

struct Options {
    var sizes = [1_000, 10_000]
    var samples = 100
    var fillBudget: TimeInterval = 600
    /// Sizes for gnome-keyring, whose every change rewrites its whole file: filling it is
    /// quadratic, so 10k items take over an hour. Default: the same as --sizes.
    var keyringSizes: [Int]?
    /// Where gnome-keyring's items go: its `login` collection (the default), or its in-memory
    /// `session` collection, which it never writes to disk, so that it can be filled to 10k
    /// items to see how its searches and reads grow.
    var keyringCollection = defaultCollection
    /// Only these operations (all when nil), e.g. to profile one of them.
    var only: Set<String>?
    /// The cofferd measured as "coffer" (default: this build's). The one Coffer installs is
    /// .build/coffer-release/bin/cofferd (scripts/build-release: the Swift runtime linked in,
    /// which also takes some megabytes off its memory).
    var cofferd: String?
    /// Another cofferd (e.g. built from an earlier commit), measured in the same run as
    /// "coffer (baseline)", with the ratio of each read to it.
    var baseline: String?
    /// Writer processes creating items at once (none: no concurrency measurement).
    var clients: Int?
    /// Items each of them creates.
    var perClient = 100
    /// How many times every provider is measured, taking turns.
    var repeats = 1
    /// Also measure the bare provider flushing on a writer thread, as Coffer does.
    var bareOffLoop = false

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--sizes": sizes = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--samples": samples = Int(iterator.next() ?? "") ?? samples
            case "--fill-budget": fillBudget = TimeInterval(iterator.next() ?? "") ?? fillBudget
            case "--keyring-sizes": keyringSizes = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--only": only = Set((iterator.next() ?? "").split(separator: ";").map(String.init))
            case "--clients": clients = Int(iterator.next() ?? "") ?? 0
            case "--per-client": perClient = Int(iterator.next() ?? "") ?? 0
            case "--repeat": repeats = Int(iterator.next() ?? "") ?? 0
            case "--bare-off-loop": bareOffLoop = true
            case "--cofferd":
                guard let path = iterator.next() else { Self.usage() }
                cofferd = path
            case "--baseline-cofferd":
                guard let path = iterator.next() else { Self.usage() }
                baseline = path
            case "--keyring-collection":
                switch iterator.next() {
                case "login": keyringCollection = defaultCollection
                case "session": keyringCollection = sessionCollection
                default: Self.usage()
                }
            default: Self.usage()
            }
        }
        if (sizes + (keyringSizes ?? [])).contains(where: { $0 < 100 }) || samples < 1 || (clients ?? 2) < 2 || perClient < 1 || repeats < 1 { Self.usage() }
    }

    static func usage() -> Never {
        print("""
            usage: coffer-bus-bench [--sizes 1000,10000] [--keyring-sizes 1000,2000 (or '' for none)]
                                    [--keyring-collection login|session] [--samples 100] [--fill-budget SECONDS]
                                    [--only 'CreateItem;SearchItems hit;...' (Delete needs CreateItem)]
                                    [--cofferd PATH (the cofferd to measure, default this build's)]
                                    [--baseline-cofferd PATH (another cofferd, measured beside this one)]
                                    [--clients 32 [--per-client 100] (writer processes creating at once)]
                                    [--repeat 3 (every provider measured 3 times in turn; medians of the runs)]
                                    [--bare-off-loop (also the bare provider flushing on a writer thread, as cofferd does)]
            """)
        exit(2)
    }
}

/// A provider under test: how to start it on a bus.
struct Provider {
    let name: String
    let executable: String
    let arguments: [String]
    /// Extra environment given its data directory.
    let environment: (String) -> [String: String]
    /// Where the items go.
    var collection = defaultCollection
    /// The yardstick (`BareProvider`): measured on the calls alone, not with secret-tool or
    /// concurrent writers.
    var isBare = false
}

/// A client with a DH session to the provider.
final class Client {
    let library: SecretServiceClient
    let session: ClientSession
    /// The collection items are created in.
    let collection: ObjectPath

    init(address: String, collection: ObjectPath) throws {
        self.collection = collection
        library = SecretServiceClient(connection: try DBusConnection(address: address))
        session = try library.openSession(.encrypted)
    }

    @discardableResult
    func createItem(_ n: Int, label: String = "Item") throws -> ObjectPath {
        try library.createItem(in: collection, label: "\(label) \(n)",
                               attributes: ["service": "bench.example.org", "account": "user\(n)"],
                               secret: try SecureBytes(Array("secret-\(n)".utf8)), replace: true, session: session)
    }

    func search(_ account: String) throws -> [ObjectPath] {
        let found = try library.search(["service": "bench.example.org", "account": account])
        return found.unlocked + found.locked
    }

    /// One GetSecrets call (not split in batches). Its reply is read as the bus carries it, not
    /// decoded into secure memory and a typed map: the figure is the provider's and the bus's
    /// time, as for the other calls (decoding 100 secrets costs the client about 1 µs each).
    func getSecrets(_ items: [ObjectPath]) throws {
        typealias GetSecrets = ServiceInterface.GetSecrets
        let input = GetSecrets.Input(items: items, session: session.path)
        _ = try library.connection.call(destination: library.destination, path: SecretPath.service, interface: GetSecrets.interface,
                                        member: GetSecrets.name, arguments: input.argumentValues)
    }

    func ping() throws {
        _ = try library.connection.call(destination: library.destination, path: SecretPath.service,
                                        interface: StandardInterface.peer, member: "Ping")
    }
}

/// The wall time `body` takes, in µs.
func microseconds(_ body: () throws -> Void) rethrows -> Double {
    let elapsed = try ContinuousClock().measure(body)
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}

/// The median of `values` (the mean of the middle two when their number is even).
func middle(_ values: [Double]) -> Double {
    let sorted = values.sorted(), half = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
}

/// Where the ratio of `operation` to `reference`, measured in turn, is kept among the timings.
func pairedRatio(_ operation: String, _ reference: String) -> String { "paired: \(operation) / \(reference)" }

func median(_ samples: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    var times: [Double] = []
    let clock = ContinuousClock()
    for i in 0..<samples {
        let elapsed = try clock.measure { try body(i) }
        times.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
    }
    times.sort()
    return times[times.count / 2]
}

/// Nanoseconds every thread of `pid` has spent on a CPU.
func cpuNanoseconds(_ pid: pid_t) -> Double {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { total, task in
        let line = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
        return total + (Double(line.split(separator: " ").first ?? "") ?? 0)
    }
}

/// Medians of one operation: wall time per call, and CPU time per call of the processes watched.
struct Timing {
    var wall: Double
    var cpu: [Double]
}

/// Runs `body` `samples` times; the median wall time and the mean CPU time per call that each
/// of `pids` spent meanwhile (µs).
func timed(_ samples: Int, watching pids: [pid_t], _ body: (Int) throws -> Void) rethrows -> Timing {
    let before = pids.map(cpuNanoseconds)
    let wall = try median(samples, body)
    let after = pids.map(cpuNanoseconds)
    return Timing(wall: wall, cpu: zip(before, after).map { ($1 - $0) / 1000 / Double(samples) })
}

/// A file with 8 MiB of reserved (written, synced) zeros, overwritten 300 bytes at a time.
final class DurableProbe {
    private let descriptor: Int32
    private var offset = 0
    private let record = [UInt8](repeating: 0x5A, count: 300)

    init(directory: String) throws {
        descriptor = open(directory + "/durable-probe", O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        guard pwrite(descriptor, zeros, zeros.count, 0) == zeros.count, fsync(descriptor) == 0 else { throw POSIXError(.EIO) }
    }

    deinit { close(descriptor) }

    func write() {
        precondition(pwrite(descriptor, record, record.count, off_t(offset)) == record.count && fdatasync(descriptor) == 0)
        offset = (offset + record.count) % ((8 << 20) - record.count)
    }
}

/// A size in KiB from `/proc/PID/status`: `VmRSS` (resident), `RssAnon` (anonymous memory),
/// `RssFile` (pages of the program and libraries), `VmLck` (locked, such as a secure pool).
func statusKiB(_ pid: pid_t, _ field: String = "VmRSS") -> Double {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// Medians per operation for one provider at one size (wall, provider CPU and bus CPU per
/// call), or nil when it could not be measured.
func measure(_ provider: Provider, size: Int, options: Options) throws -> [String: Timing]? {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bus-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
    environment.merge(provider.environment(directory)) { $1 }
    let arguments = provider.arguments.map { $0 == "DATA" ? directory + "/data" : $0 }
    let daemon = try ChildProcess(provider.executable, arguments: arguments, environment: environment,
                                  stdin: Array("bench password".utf8))
    defer { _ = daemon.terminate() }

    do {
        try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: daemon, timeout: 20)
    } catch {
        FileHandle.standardError.write(Data("\(provider.name) did not start: \(error)\n".utf8))
        return nil
    }
    // Coffer's default policy asks before another program (secret-tool) reads a secret; the
    // other providers have no such check, so the collection is made `open` for the comparison.
    if let flag = arguments.firstIndex(of: "--data-dir"), flag + 1 < arguments.count {
        guard let coffer = Executables.built("coffer") else { throw BenchError("coffer is not built next to the benchmark") }
        let policy = try ChildProcess(coffer, arguments: ["--data-dir", arguments[flag + 1], "policy", "--password-stdin", "open"],
                                      environment: environment, stdin: Array("bench password\n".utf8)).wait(timeout: 60)
        guard policy.exitCode == 0 else { throw BenchError("coffer policy open failed: \(policy)") }
    }
    let client = try Client(address: bus.address, collection: provider.collection)
    defer { client.library.close() }
    let started = Date()
    for n in 0..<size {
        try client.createItem(n)
        if Date().timeIntervalSince(started) > options.fillBudget {
            FileHandle.standardError.write(Data("\(provider.name): filling \(size) items took over \(Int(options.fillBudget)) s; stopped at \(n)\n".utf8))
            return nil
        }
    }
    let samples = options.samples
    let pids = [daemon.pid, bus.pid]
    var result: [String: Timing] = [:]
    /// Times `operation` unless `--only` leaves it out.
    func time(_ operation: String, samples: Int = samples, _ body: (Int) throws -> Void) throws {
        guard options.only?.contains(operation) ?? true else { return }
        result[operation] = try timed(samples, watching: pids, body)
    }
    result["fill: seconds for all CreateItem"] = Timing(wall: Date().timeIntervalSince(started) * 1e6, cpu: [])
    var created: [ObjectPath] = []
    try time("CreateItem") { i in created.append(try client.createItem(size + i, label: "New")) }
    try time("SearchItems hit") { i in
        let found = try client.search("user\((i * 7919) % size)")
        precondition(found.count == 1)
    }
    try time("SearchItems miss") { i in
        let found = try client.search("nobody\(i)")
        precondition(found.isEmpty)
    }
    try time("Peer.Ping") { _ in try client.ping() }
    // What no durable write over the bus can beat here: a round trip plus writing one record
    // into reserved space of a file beside the data and waiting for the disk (fdatasync).
    let durable = try DurableProbe(directory: directory)
    try time("floor: Ping + fdatasync of 300 B") { _ in
        try client.ping()
        durable.write()
    }
    let paths = try (0..<100).map { try client.search("user\($0 * (size / 100))")[0] }
    try time("GetSecrets, 1 item") { i in
        try client.getSecrets([paths[i % 100]])
    }
    try time("GetSecrets, 100 items", samples: max(10, samples / 4)) { _ in
        try client.getSecrets(paths)
    }
    try time("SetSecret") { i in
        try client.library.setSecret(of: paths[i % 100], to: try SecureBytes(Array("changed-\(i)".utf8)), session: client.session)
    }
    try time("Label change") { i in
        try client.library.setLabel(ofItem: paths[i % 100], to: "Relabelled \(i)")
    }
    if created.count >= samples { try time("Delete") { i in
        try client.library.deleteItem(created[i])
    } }
    // The targets' ratios: each call and its reference (the floor, or a Ping) taken in turn, so
    // that a slow spell of the machine weighs on both alike; the ratio of their medians.
    func paired(_ operation: String, against reference: String, _ body: (Int) throws -> Void, _ base: () throws -> Void) throws {
        guard options.only?.contains(operation) ?? true else { return }
        var ours: [Double] = [], theirs: [Double] = []
        for i in 0..<samples {
            ours.append(try microseconds { try body(i) })
            theirs.append(try microseconds(base))
        }
        result[pairedRatio(operation, reference)] = Timing(wall: middle(ours) / middle(theirs), cpu: [])
    }
    let floor = { try client.ping(); durable.write() }
    var fresh: [ObjectPath] = []
    try paired("CreateItem", against: "floor", { i in fresh.append(try client.createItem(size + samples + i, label: "New")) }, floor)
    try paired("SetSecret", against: "floor", { i in
        try client.library.setSecret(of: paths[i % 100], to: try SecureBytes(Array("again-\(i)".utf8)), session: client.session)
    }, floor)
    try paired("Label change", against: "floor", { i in try client.library.setLabel(ofItem: paths[i % 100], to: "Again \(i)") }, floor)
    if fresh.count >= samples { try paired("Delete", against: "floor", { i in try client.library.deleteItem(fresh[i]) }, floor) }
    try paired("SearchItems hit", against: "Peer.Ping", { i in _ = try client.search("user\((i * 7919) % size)") }, client.ping)
    try paired("SearchItems miss", against: "Peer.Ping", { i in _ = try client.search("nobody\(i)") }, client.ping)
    if !provider.isBare, let tool = Executables.inPath("secret-tool") {
        try time("secret-tool lookup (process)", samples: 10) { i in
            let lookup = try ChildProcess(tool, arguments: ["lookup", "service", "bench.example.org", "account", "user\(i)"],
                                          environment: environment)
            precondition(!lookup.wait(timeout: 30).stdout.isEmpty)
        }
    }
    if !provider.isBare, let clients = options.clients {
        var next = size * 10
        for count in [1, clients] {
            let outcome = try ConcurrentWriters.measure(address: bus.address, collection: provider.collection, clients: count,
                                                        perClient: options.perClient, firstIndex: next, environment: environment,
                                                        watching: pids)
            next += count * options.perClient
            concurrency[provider.name + " N=\(size)", default: []].append(outcome)
        }
    }
    result["daemon RSS (KiB)"] = Timing(wall: statusKiB(daemon.pid), cpu: [])
    result["  of which anonymous"] = Timing(wall: statusKiB(daemon.pid, "RssAnon"), cpu: [])
    result["  of which file pages"] = Timing(wall: statusKiB(daemon.pid, "RssFile"), cpu: [])
    result["  locked (secure memory)"] = Timing(wall: statusKiB(daemon.pid, "VmLck"), cpu: [])
    return result
}

/// Per column, one writer alone then `--clients` writers at once.
nonisolated(unsafe) var concurrency: [String: [ConcurrentWriters.Result]] = [:]

if CommandLine.arguments.dropFirst().first == "--writer" {
    try ConcurrentWriters.runWriter(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.dropFirst().first == "--bare-provider" {
    BareProvider.run(Array(CommandLine.arguments.dropFirst(2)))
}
let options = Options(CommandLine.arguments)
var providers: [Provider] = []
if let cofferd = options.cofferd ?? Executables.built("cofferd") {
    providers.append(Provider(name: "coffer", executable: cofferd,
                              arguments: ["--unlock", "--foreground", "--data-dir", "DATA"]) { _ in [:] })
} else {
    print("cofferd is not built: swift build -c release")
    exit(1)
}
if let baseline = options.baseline {
    providers.append(Provider(name: "coffer (baseline)", executable: baseline,
                              arguments: ["--unlock", "--foreground", "--data-dir", "DATA"]) { _ in [:] })
}
/// The yardstick of the write targets: what a provider built as they ask takes at the least.
let offLoopName = "bare provider, flush off the loop"
if let me = Executables.built("coffer-bus-bench") {
    providers.append(Provider(name: "bare provider", executable: me, arguments: ["--bare-provider", "DATA"], environment: { _ in [:] },
                              isBare: true))
    if options.bareOffLoop {
        providers.append(Provider(name: offLoopName, executable: me,
                                  arguments: ["--bare-provider", "DATA", "--flush-off-loop"], environment: { _ in [:] }, isBare: true))
    }
}
if let keyring = Executables.inPath("gnome-keyring-daemon") {
    let inSession = options.keyringCollection == sessionCollection
    providers.append(Provider(name: inSession ? "gnome-keyring (session)" : "gnome-keyring", executable: keyring,
                              arguments: ["--unlock", "--foreground", "--components=secrets"], environment: { directory in
        ["XDG_DATA_HOME": directory, "XDG_RUNTIME_DIR": directory, "HOME": directory, "XDG_CONFIG_HOME": directory]
    }, collection: options.keyringCollection))
}

var runs: [String: [[String: Timing]]] = [:]   // "provider N" -> one run after another: operation -> µs
var order: [String] = []
for run in 1...options.repeats {
    for provider in providers {
        for size in !provider.name.hasPrefix("gnome-keyring") ? options.sizes : (options.keyringSizes ?? options.sizes) {
            let column = "\(provider.name) N=\(size)"
            if run == 1 { order.append(column) }
            let turn = options.repeats > 1 ? " (run \(run) of \(options.repeats))" : ""
            FileHandle.standardError.write(Data("measuring \(column)\(turn)…\n".utf8))
            if let result = try measure(provider, size: size, options: options) { runs[column, default: []].append(result) }
        }
    }
}

/// Each figure's median over the runs that measured it.
func medianOfRuns(_ runs: [[String: Timing]]) -> [String: Timing] {
    let operations = Set(runs.flatMap(\.keys))
    return Dictionary(uniqueKeysWithValues: operations.map { operation in
        let timings = runs.compactMap { $0[operation] }
        let cpu = (0..<(timings.map(\.cpu.count).min() ?? 0)).map { i in middle(timings.map { $0.cpu[i] }) }
        return (operation, Timing(wall: middle(timings.map(\.wall)), cpu: cpu))
    })
}
let table = runs.mapValues(medianOfRuns)   // "provider N" -> operation -> µs

let operations = ["floor: Ping + fdatasync of 300 B", "CreateItem", "SearchItems hit", "SearchItems miss", "Peer.Ping", "GetSecrets, 1 item", "GetSecrets, 100 items",
                  "SetSecret", "Label change", "Delete", "secret-tool lookup (process)", "daemon RSS (KiB)", "  of which anonymous", "  of which file pages",
                  "  locked (secure memory)", "fill: seconds for all CreateItem"]
let keyringMeasured = Set(order.filter { $0.hasPrefix("gnome-keyring") && !(table[$0] ?? [:]).isEmpty }
    .compactMap { Int($0.split(separator: "=").last ?? "") })
let largest = options.sizes.filter(keyringMeasured.contains).max() ?? 0
let keyringName = providers.last { $0.name.hasPrefix("gnome-keyring") }.map(\.name) ?? "gnome-keyring"
let ratioColumn = largest > 0 ? "\(keyringName) / coffer at N=\(largest)" : nil

/// Prints one table: `title` over the operations, one column per provider and size.
@MainActor func printTable(_ title: String, operations: [String], _ value: (Timing) -> Double?) {
    var header = [title] + order
    if let ratioColumn { header.append(ratioColumn) }
    var lines = [header]
    for operation in operations {
        var line = [operation]
        for column in order {
            guard let timing = table[column]?[operation], var number = value(timing) else { line.append("—"); continue }
            if operation.hasPrefix("fill") { number /= 1e6 }
            line.append(String(format: number >= 100 ? "%.0f" : "%.1f", number))
        }
        if ratioColumn != nil {
            let ours = table["coffer N=\(largest)"]?[operation].flatMap(value)
            let theirs = table["\(keyringName) N=\(largest)"]?[operation].flatMap(value)
            line.append(ours.flatMap { o in theirs.map { String(format: "%.1f×", $0 / max(o, 0.001)) } } ?? "—")
        }
        lines.append(line)
    }
    let widths = header.indices.map { i in lines.map { i < $0.count ? $0[i].count : 0 }.max() ?? 0 }
    for line in lines {
        print(line.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
    }
    print("")
}

printTable("median µs", operations: operations) { $0.wall }
let calls = Array(operations.prefix(10))
printTable("provider CPU µs per call", operations: calls) { $0.cpu.first }
printTable("dbus-daemon CPU µs per call", operations: calls) { $0.cpu.count > 1 ? $0.cpu[1] : nil }

// Reads against the baseline: what the access checks and the audit log add to a read.
if options.baseline != nil {
    print("reads against the baseline cofferd (median µs; target: at most 1.10×)")
    for size in options.sizes {
        for operation in ["GetSecrets, 1 item", "GetSecrets, 100 items", "SearchItems hit"] {
            guard let ours = table["coffer N=\(size)"]?[operation]?.wall,
                  let theirs = table["coffer (baseline) N=\(size)"]?[operation]?.wall else { continue }
            let ratio = ours / max(theirs, 0.001)
            print(String(format: "  N=%-6d %-24@ %8.1f vs %8.1f  %.2f×  %@", size, operation as NSString, ours, theirs, ratio,
                         (ratio <= 1.10 ? "holds" : "does not hold") as NSString))
        }
    }
}

if options.clients != nil {
    print("writers creating at once (each its own process and connection; this machine has \(ProcessInfo.processInfo.activeProcessorCount) cores)")
    for column in order {
        // One writer alone, then all of them, once per run.
        guard let results = concurrency[column], results.count >= 2 else { continue }
        var ratios: [Double] = []
        for pair in stride(from: 0, to: results.count - 1, by: 2).map({ (results[$0], results[$0 + 1]) }) {
            let (one, many) = pair
            for r in [one, many] {
                print(String(format: "  %-28@ %3d client(s): %7.0f creates/s  p50 %7.0f µs  p99 %7.0f µs  provider %.2f cores, dbus-daemon %.2f cores, clients %.2f cores",
                             column as NSString, r.clients, r.createsPerSecond, r.p50, r.p99, r.cpuShare.first ?? 0, r.cpuShare.last ?? 0,
                             r.clientsShare))
            }
            let ratio = many.createsPerSecond / max(one.createsPerSecond, 0.001)
            ratios.append(ratio)
            print(String(format: "  %-28@ %d clients / 1: %.2f× (target ≥ 3×: %@)", column as NSString, many.clients, ratio,
                         (ratio >= 3 ? "holds" : "does not hold") as NSString))
            let cores = ProcessInfo.processInfo.activeProcessorCount, ceiling = many.ceiling(cores: cores)
            print(String(format: "  %-28@ CPU per create with %d clients (provider + dbus-daemon + writer): %.0f µs; %d cores allow at most %.0f creates/s at that cost, %.2f× one writer",
                         column as NSString, many.clients, many.cpuPerCreate, cores, ceiling, ceiling / max(one.createsPerSecond, 0.001)))
        }
        if ratios.count > 1 {
            let ratio = middle(ratios)
            print(String(format: "  %-28@ median of %d runs: %.2f× (lowest %.2f×, highest %.2f×; target ≥ 3×: %@)", column as NSString,
                         ratios.count, ratio, ratios.min() ?? 0, ratios.max() ?? 0, (ratio >= 3 ? "holds" : "does not hold") as NSString))
        }
    }
}

// The targets of the speed work, each as a ratio measured in this run, and whether it holds.
// A ratio to the floor or to a Ping comes from the call and its reference timed in turn.
/// The writes whose ratio to the floor has a target, and that target.
let writeTargets = ["CreateItem", "SetSecret", "Delete", "Label change"], writeLimit = 1.25
print(options.repeats > 1 ? "targets (median of \(options.repeats) runs, lowest and highest run in brackets; a call and its reference timed in turn for each ratio)"
                          : "targets (this run; a call and its reference timed in turn for each ratio)")
let nameWidth = (order.map(\.count).max() ?? 0) + 2
for column in order where column.hasPrefix("coffer") || column.hasPrefix("bare provider") {
    guard let row = table[column] else { continue }
    func wall(_ operation: String) -> Double? { row[operation]?.wall }
    func report(_ what: String, _ ratio: Double?, _ limit: Double, unit: String = "×", each: [Double] = []) {
        guard let ratio else { return }
        let measured = String(format: "%.2f", ratio) + unit, target = String(format: "%.2f", limit) + unit
        let spread = each.count > 1 ? String(format: "(%.2f–%.2f)", each.min() ?? 0, each.max() ?? 0) : ""
        print("  " + column.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + what.padding(toLength: 30, withPad: " ", startingAt: 0)
              + measured.padding(toLength: 10, withPad: " ", startingAt: 0) + spread.padding(toLength: 13, withPad: " ", startingAt: 0)
              + "target ≤ \(target): " + (ratio <= limit ? "holds" : "does not hold"))
    }
    /// `operation`'s figure in every run, scaled by `scale`.
    func each(_ operation: String, scale: Double = 1) -> [Double] { (runs[column] ?? []).compactMap { $0[operation].map { $0.wall * scale } } }
    for write in writeTargets {
        report("\(write) / floor", wall(pairedRatio(write, "floor")), writeLimit, each: each(pairedRatio(write, "floor")))
    }
    for search in ["SearchItems hit", "SearchItems miss"] {
        report("\(search) / Peer.Ping", wall(pairedRatio(search, "Peer.Ping")), 1.5, each: each(pairedRatio(search, "Peer.Ping")))
    }
    report("GetSecrets, 100 items (ms)", wall("GetSecrets, 100 items").map { $0 / 1000 }, 0.8, unit: " ms",
           each: each("GetSecrets, 100 items", scale: 0.001))
    let size = column.split(separator: "=").last.map(String.init) ?? ""
    if let ours = wall("daemon RSS (KiB)"), let theirs = table["\(keyringName) N=\(size)"]?["daemon RSS (KiB)"]?.wall {
        report("RSS / gnome-keyring's", ours / theirs, 1.0)
    }
}

// Whether a write target Coffer misses is within reach here: the bare provider flushing off its
// loop, in this same run, does the least any provider built as the targets ask can do. When it
// misses the target too, the target is out of reach on this machine; when it meets it, the gap
// is Coffer's own work.
if options.bareOffLoop {
    print("write targets against the bare provider flushing off its loop (the least such a provider does), in this run")
    for column in order where column.hasPrefix("coffer") {
        let size = column.split(separator: "=").last.map(String.init) ?? ""
        guard let row = table[column], let yardstick = table["\(offLoopName) N=\(size)"] else { continue }
        for write in writeTargets {
            guard let ours = row[pairedRatio(write, "floor")]?.wall, let least = yardstick[pairedRatio(write, "floor")]?.wall else { continue }
            let verdict = ours <= writeLimit ? "holds"
                : least > writeLimit ? "out of reach here: the bare provider misses it too"
                : "does not hold, and is within reach: the bare provider meets it"
            print("  " + column.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "\(write) / floor".padding(toLength: 22, withPad: " ", startingAt: 0)
                  + String(format: "%.2f× (bare provider %.2f×): ", ours, least) + verdict)
        }
    }
}
