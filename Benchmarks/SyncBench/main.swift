import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol

// coffer-sync-bench: what syncing costs, each figure beside a floor measured in the same run.
//
// 1. Propagation: a CreateItem on one machine until the other machine's cofferd finds the item
//    (SearchItems, polled every 5 ms), through two real Syncthing instances on loopback, against
//    Syncthing's own time to carry a small plain file between the same folders (the floor),
//    samples of the two taken in turn. Target: at most the floor + 1 s.
// 2. Local writes: CreateItem on a cofferd whose collection syncs, against one that does not,
//    in turn. Target: within 1.10×.
// 3. In the store (no daemon): a device joining a collection of --items items, and the merge
//    of another device's changes, per change, against committing the same changes locally.
//
// Usage: coffer-sync-bench [--samples 10] [--items 10000] [--writes 200]
// Runs as a normal user; needs syncthing (scripts/setup --tests installs it) and a release
// build of cofferd and coffer next to it (swift build -c release).

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

var samples = 10, itemCount = 10_000, writes = 200
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
        print("usage: coffer-sync-bench [--samples N] [--items N] [--writes N]")
        exit(2)
    }
    switch flag {
    case "--samples": samples = value
    case "--items": itemCount = value
    case "--writes": writes = value
    default:
        print("usage: coffer-sync-bench [--samples N] [--items N] [--writes N]")
        exit(2)
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted(), half = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let elapsed = try ContinuousClock().measure(body)
    return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
}

/// Polls `condition` every 5 ms for up to `timeout` seconds.
func waitFor(_ what: String, timeout: TimeInterval = 60, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return }
        usleep(5_000)
    }
    throw BenchError("timed out waiting for \(what)")
}

let password = "sync bench password"
let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-bench-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

/// A cofferd on a private bus of its own, its login unlocked and open to other programs.
final class Machine {
    let bus: PrivateBus
    let daemon: ChildProcess
    let dataDir: String
    let client: SecretServiceClient
    let session: ClientSession
    let coffer: String

    init(_ name: String) throws {
        guard let cofferd = Executables.built("cofferd"), let coffer = Executables.built("coffer") else {
            throw BenchError("cofferd and coffer are not built next to the benchmark (swift build -c release)")
        }
        self.coffer = coffer
        dataDir = "\(root)/\(name)"
        bus = try PrivateBus()
        var environment = bus.environment(["HOME": "\(root)/\(name)-home"])
        environment["COFFER_PINENTRY"] = nil
        environment["COFFER_TEST_FAST_KDF"] = nil   // a release cofferd refuses it: the real key derivation is measured
        daemon = try ChildProcess(cofferd, arguments: ["--unlock", "--foreground", "--data-dir", dataDir, "--pinentry", "/nonexistent"],
                                  environment: environment, stdin: Array(password.utf8))
        try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: daemon, timeout: 30)
        client = SecretServiceClient(connection: try DBusConnection(address: bus.address))
        session = try client.openSession(.encrypted)
        try run(["policy", "open"])
    }

    func run(_ arguments: [String], stdin: String = password + "\n") throws {
        var environment = bus.environment(["HOME": "\(root)/home"])
        environment["COFFER_TEST_FAST_KDF"] = nil
        let result = try ChildProcess(coffer, arguments: ["--data-dir", dataDir] + arguments + ["--password-stdin"],
                                      environment: environment, stdin: Array(stdin.utf8)).wait(timeout: 120)
        guard result.exitCode == 0 else { throw BenchError("coffer \(arguments.joined(separator: " ")): \(result)") }
    }

    func create(_ name: String) throws {
        _ = try client.createItem(in: SecretPath.collection(named: "login"), label: name, attributes: ["bench": name],
                                  secret: try SecureBytes(Array(name.utf8)), replace: true, session: session)
    }

    func has(_ name: String) throws -> Bool { !(try client.search(["bench": name]).unlocked.isEmpty) }

    func stop() {
        client.close()
        _ = daemon.terminate()
        bus.stop()
    }
}

// MARK: 1. Propagation through Syncthing, against Syncthing carrying a plain file

print("coffer-sync-bench: \(samples) samples, \(itemCount) items, \(writes) writes")
let (syncthingA, syncthingB) = try SyncthingInstance.pair(root: "\(root)/syncthing")
defer {
    syncthingA.stop()
    syncthingB.stop()
}
let a = try Machine("a"), b = try Machine("b"), unsynced = try Machine("c")
defer { [a, b, unsynced].forEach { $0.stop() } }
try a.run(["sync", "enable", syncthingA.folder, "--collection", "login"])
guard let name = try FileManager.default.contentsOfDirectory(atPath: syncthingA.folder).first(where: { $0.count == 32 }) else {
    throw BenchError("sync enable made no folder")
}
try waitFor("the synced folder on the other machine") { FileManager.default.fileExists(atPath: "\(syncthingB.folder)/\(name)/collection.keys") }
try b.run(["sync", "join", "\(syncthingB.folder)/\(name)", "--collection", "login"])

var floor: [Double] = [], propagation: [Double] = []
for i in 0..<samples {
    let probe = "probe-\(i).txt"
    floor.append(try milliseconds {
        try Data("probe \(i)".utf8).write(to: URL(fileURLWithPath: "\(syncthingA.folder)/\(probe)"))
        try waitFor("a plain file") { (try? String(contentsOfFile: "\(syncthingB.folder)/\(probe)", encoding: .utf8)) == "probe \(i)" }
    })
    propagation.append(try milliseconds {
        try a.create("item-\(i)")
        try waitFor("item-\(i) on the other machine") { try b.has("item-\(i)") }
    })
}
let floorMedian = median(floor), propagationMedian = median(propagation)
print("")
print("propagation through Syncthing (median of \(samples), ms; target: at most the floor + 1000 ms)")
print(String(format: "  Syncthing carrying a plain file (floor)   %8.1f", floorMedian))
print(String(format: "  CreateItem here until found there         %8.1f   (floor + %.1f ms, %.2fx)", propagationMedian,
             propagationMedian - floorMedian, propagationMedian / floorMedian))

// MARK: 2. Local writes on a synced collection, against an unsynced one

var synced: [Double] = [], plain: [Double] = []
for block in 0..<(writes / 10) {
    for j in 0..<10 { synced.append(try milliseconds { try a.create("write-\(block)-\(j)") }) }
    for j in 0..<10 { plain.append(try milliseconds { try unsynced.create("write-\(block)-\(j)") }) }
}
print("")
print("CreateItem while syncing (median of \(synced.count), ms; target: within 1.10x)")
print(String(format: "  collection not synced (floor)             %8.3f", median(plain)))
print(String(format: "  collection synced                         %8.3f   (%.2fx)", median(synced), median(synced) / median(plain)))

// MARK: 3. In the store: joining, and merging per change

func fileCollection(_ store: FileStore, _ name: String) throws -> FileCollection {
    guard let collection = try store.create(CollectionID(name)!, label: name, password: try SecureBytes(Array(password.utf8)),
                                            access: CollectionAccess(policy: .forNewCollections)) as? FileCollection else {
        throw BenchError("not a file collection")
    }
    return collection
}

func insertions(_ range: Range<Int>, _ prefix: String) throws -> [ItemChange] {
    try range.map { n in
        .insert(NewItem(label: "\(prefix) \(n)", attributes: ["service": "bench.example.org", "account": "\(prefix)\(n)"],
                        secret: Secret(bytes: try SecureBytes(Array("secret-\(n)".utf8)), contentType: "text/plain")),
                onDuplicate: .allow)
    }
}

let sharedFolder = "\(root)/shared"
try FileManager.default.createDirectory(atPath: sharedFolder, withIntermediateDirectories: true)
let first = try FileStore(directory: "\(root)/store-1", kdf: .testing)
let source = try fileCollection(first, "work")
for start in stride(from: 0, to: itemCount, by: 1000) { _ = try source.commit(try insertions(start..<min(start + 1000, itemCount), "user")) }
var enabledFolder = ""
let enabling = try milliseconds {
    enabledFolder = try CollectionSync.enable(source, directory: "\(root)/store-1", syncedFolder: sharedFolder,
                                              password: try SecureBytes(Array(password.utf8))).folder
}
var joins: [Double] = []
var joined: [(FileCollection, CollectionSync)] = []
for n in 0..<3 {
    let store = try FileStore(directory: "\(root)/store-join-\(n)", kdf: .testing)
    let collection = try fileCollection(store, "work")
    var sync: CollectionSync?
    joins.append(try milliseconds {
        sync = try CollectionSync.join(collection, directory: "\(root)/store-join-\(n)", folder: enabledFolder,
                                       password: try SecureBytes(Array(password.utf8)))
    })
    guard try collection.itemIDs(matching: [:], limit: .all).count == itemCount, let sync else { throw BenchError("the join brought too few items") }
    joined.append((collection, sync))
}
print("")
print("a collection of \(itemCount) items, in the store (ms)")
print(String(format: "  enabling sync (every item written out)    %8.1f", enabling))
print(String(format: "  a device joining (median of 3)            %8.1f", median(joins)))

// Merge: 1,000 of the source's items changed there, then applied on a joined device, against
// the same device committing 1,000 such changes itself.
let changed = 1000
let sourceIDs = Array(try source.itemIDs(matching: [:], limit: .all).prefix(changed))
_ = try source.commit(try sourceIDs.map { .update($0, ItemChanges(secret: Secret(bytes: try SecureBytes(Array("changed-\($0)".utf8)),
                                                                                    contentType: "text/plain"))) })
let sourceSync = CollectionSync(collection: source, directory: "\(root)/store-1")
try sourceSync.sync()
let (target, targetSync) = joined[0]
var applied = 0
let merging = try milliseconds { applied = try targetSync.sync().applied.count }
guard applied == changed else { throw BenchError("merged \(applied) changes, not \(changed)") }
let targetIDs = Array(try target.itemIDs(matching: [:], limit: .all).suffix(changed))
let local = try milliseconds {
    _ = try target.commit(try targetIDs.map { .update($0, ItemChanges(secret: Secret(bytes: try SecureBytes(Array("local-\($0)".utf8)),
                                                                                        contentType: "text/plain"))) })
}
print(String(format: "  merging %d changes of another device      %8.1f   (%.1f µs per change)", changed, merging, merging * 1000 / Double(changed)))
print(String(format: "  committing %d changes locally (floor)     %8.1f   (%.1f µs per change; merge %.2fx)", changed, local,
             local * 1000 / Double(changed), merging / local))
