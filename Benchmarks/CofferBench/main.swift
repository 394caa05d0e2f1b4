// coffer-bench: how the core and the encrypted store scale with the number of items.
//
// For each N it fills a fresh collection with N items (in batches), then times single
// operations through the Keychain facade and reports medians. Every add/update/delete is a
// durable change (records appended and fdatasync'd). `open` parses the file of a locked
// collection (no KDF); the memory that opened collection holds is stated per item, and the
// peak an unlock reaches (Argon2id's memory) with what is left of it afterwards. A write that
// brings on a compaction is timed until it is acknowledged (when a client's reply leaves) and
// until the compaction after it is done. Adding and removing a key slot is timed at each N and
// in an empty collection; an unlock through the password's slot (Argon2id), through a
// recovery key's, and, when $COFFER_TPM_TCTI names a TPM (a swtpm, or device:/dev/tpmrm0),
// through a TPM slot without and with a PIN. Run a release build:
//
//   swift run -c release coffer-bench [--sizes 1000,10000,100000] [--samples 200]
import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import TPMKit

struct Options {
    var sizes = [1_000, 10_000, 100_000]
    var samples = 200

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--sizes": sizes = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--samples": samples = Int(iterator.next() ?? "") ?? samples
            default:
                print("usage: coffer-bench [--sizes 1000,10000,100000] [--samples 200]")
                exit(2)
            }
        }
    }
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.attoseconds) / 1e12 + Double(duration.components.seconds) * 1e6
}

/// Median of `samples` runs of `body`, in microseconds.
func median(_ samples: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    var times: [Double] = []
    times.reserveCapacity(samples)
    let clock = ContinuousClock()
    for i in 0..<samples {
        times.append(microseconds(try clock.measure { try body(i) }))
    }
    times.sort()
    return times[times.count / 2]
}

/// A line of /proc/self/status in KiB (`VmRSS`, `VmHWM`).
func statusKiB(_ field: String) -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// `coffer-bench --open-memory DIRECTORY`: the KiB of RSS that opening collection `bench`
/// there (locked) adds to a fresh process, printed alone.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--open-memory" {
    let before = statusKiB("VmRSS")
    let opened = try FileStore(directory: CommandLine.arguments[2], kdf: .testing).open(CollectionID("bench")!)
    _ = try opened.info()
    print(Int(statusKiB("VmRSS") - before))
    exit(0)
}

/// What `--open-memory` reports for `directory`, from a process of its own (in this one,
/// memory freed earlier would be reused and hide the growth).
func openMemoryKiB(_ directory: String) throws -> Double {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    child.arguments = ["--open-memory", directory]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    return Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan
}

/// Resets VmHWM to the current RSS (Linux: writing 5 to clear_refs).
func resetPeak() {
    try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
}

func secretBytes(_ text: String) throws -> Secret { Secret(bytes: try SecureBytes(Array(text.utf8))) }

func attributes(_ n: Int) -> Attributes {
    ["service": "bench.example.org", "account": "user\(n)", ItemClass.schemaAttribute: ItemClass.genericPassword.schema]
}

/// One small write that brings on a compaction, timed until it is acknowledged (a client's
/// reply leaves then) and until the compaction after it is done. Superseded records are first
/// made to just short of outweighing the live ones: an item given the largest secret again and
/// again until that compacts, as many times less one; then the first item's label is changed
/// until a change compacts.
func compactingWrite(_ backend: any CollectionBackend, file: String) throws -> (acknowledged: Double, compacted: Double) {
    func inode() throws -> Int { try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int ?? 0 }
    let big = [UInt8](repeating: 0x5a, count: Limits.maxSecretBytes)
    var bulky: [ItemChange] = [.insert(NewItem(label: "bulky", attributes: ["bulky": "1"], secret: Secret(bytes: try SecureBytes(big))),
                                       onDuplicate: .allow)]
    var item: ItemID = 0
    try backend.commit(&bulky) { item = $0[0].id }
    func giveBigSecret() throws {
        var changes: [ItemChange] = [.update(item, ItemChanges(secret: Secret(bytes: try SecureBytes(big))))]
        try backend.commit(&changes) { _ in }
    }
    var start = try inode(), updates = 0
    while try inode() == start {
        try giveBigSecret()
        updates += 1
    }
    start = try inode()
    for _ in 0..<(updates - 1) { try giveBigSecret() }
    var n = 0
    while true {
        n += 1
        var changes: [ItemChange] = [.update(1, ItemChanges(label: "Item 0, relabelled \(n)"))]
        let started = ContinuousClock.now
        var acknowledged = started
        try backend.commit(&changes) { _ in acknowledged = ContinuousClock.now }
        let returned = ContinuousClock.now
        if try inode() != start { return (microseconds(acknowledged - started), microseconds(returned - started)) }
    }
}

let options = Options(CommandLine.arguments)
let collection = CollectionID("bench")!
/// Median per operation, one value per size, in the order first measured.
final class Results {
    private(set) var rows: [(name: String, values: [Double])] = []
    func record(_ name: String, _ value: Double) {
        if let index = rows.firstIndex(where: { $0.name == name }) {
            rows[index].values.append(value)
        } else {
            rows.append((name, [value]))
        }
    }
}
let results = Results()

// The key derivation an unlock pays (Argon2id with the default parameters), once per unlock
// and independent of N; measured first, while the process holds little memory, so that its
// peak is not hidden in memory freed earlier.
let kdfDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-kdf-\(UUID().uuidString)").path
let kdfKeychain = Keychain(provider: try FileStore(directory: kdfDirectory))
let kdfPassword = try SecureBytes(Array("bench password".utf8))
try kdfKeychain.createCollection(label: "KDF", id: collection, password: kdfPassword)
let defaults = Argon2Parameters.default
try kdfKeychain.lock(collection)
let rssBeforeUnlock = statusKiB("VmRSS")
resetPeak()
try kdfKeychain.unlock(collection, password: kdfPassword)
let unlockPeak = statusKiB("VmHWM") - rssBeforeUnlock
let unlockLeft = statusKiB("VmRSS") - rssBeforeUnlock
let unlock = try median(5) { _ in
    try kdfKeychain.lock(collection)
    try kdfKeychain.unlock(collection, password: kdfPassword)
}
// The same collection opened through its other key slot, a recovery key (HKDF: no Argon2id).
let kdfFile = try FileStore(directory: kdfDirectory).fileCollection(collection)
let (kdfRecoveryKey, _) = try kdfFile.addRecoveryKey(password: kdfPassword)
let unlockByRecoveryKey = try median(5) { _ in
    kdfFile.lock()
    try kdfFile.unlock(recoveryKey: kdfRecoveryKey)
}
// And through a TPM slot, when there is a TPM to use: each unlock makes the storage key,
// loads the sealed object, runs the policy and unseals.
let tpmTCTI = ProcessInfo.processInfo.environment[TPMDevice.environmentVariable]
var unlockByTPM: (plain: Double, withPIN: Double)?
if tpmTCTI != nil {
    let device = TPMDevice.configured(ProcessInfo.processInfo.environment)
    let pin = try SecureBytes(Array("246813".utf8))
    let plainSlot = try kdfFile.addTPMSlot(device, pin: nil, pcrs: .none, password: kdfPassword)
    let plain = try median(5) { _ in
        kdfFile.lock()
        try kdfFile.unlock(tpm: device, pin: nil)
    }
    _ = try kdfFile.addTPMSlot(device, pin: pin, pcrs: .none, password: kdfPassword)
    try kdfFile.removeKeySlot(plainSlot.id, password: kdfPassword)   // only the PIN slot opens now
    let withPIN = try median(5) { _ in
        kdfFile.lock()
        try kdfFile.unlock(tpm: device, pin: pin)
    }
    unlockByTPM = (plain, withPIN)
}
try? FileManager.default.removeItem(atPath: kdfDirectory)

/// Median of adding a recovery key to `collection` and removing it again (each opening the
/// collection with `password`, as the commands do, and rewriting its keys file).
func slotChange(_ file: FileCollection, password: SecureBytes, samples: Int) throws -> Double {
    try median(samples) { _ in
        let (_, slot) = try file.addRecoveryKey(password: password)
        try file.removeKeySlot(slot.id, password: password)
    }
}

for size in options.sizes {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-bench-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let password = try SecureBytes(Array("bench password".utf8))
    let keychain = Keychain(provider: try FileStore(directory: directory, kdf: .testing))
    try keychain.createCollection(label: "Bench", id: collection, password: password)
    let backend = try keychain.collection(collection)
    let batch = 1_000
    for start in stride(from: 0, to: size, by: batch) {
        let changes: [ItemChange] = try (start..<min(size, start + batch)).map {
            .insert(NewItem(label: "Item \($0)", attributes: attributes($0), secret: try secretBytes("secret-\($0)")),
                    onDuplicate: .allow)
        }
        _ = try backend.commit(changes)
    }
    let samples = options.samples
    var next = size

    results.record("add (durable)", try median(samples) { _ in
        try keychain.add(NewItem(label: "New", attributes: attributes(next), secret: try secretBytes("s")), to: collection)
        next += 1
    })
    results.record("search hit", try median(samples * 10) { i in
        let found = try keychain.search(Query(attributes: attributes((i * 7919) % size), collection: collection, limit: .one))
        precondition(found.count == 1)
    })
    results.record("search hit + attributes + secret", try median(samples * 10) { i in
        let found = try keychain.search(Query(attributes: attributes((i * 7919) % size), collection: collection, limit: .one,
                                              returnAttributes: true, returnSecret: true))
        precondition(found.first?.secret != nil)
    })
    results.record("search miss", try median(samples * 10) { i in
        let found = try keychain.search(Query(attributes: ["service": "bench.example.org", "account": "nobody\(i)"],
                                              collection: collection))
        precondition(found.isEmpty)
    })
    results.record("update one (durable)", try median(samples) { i in
        try keychain.update(Query(attributes: attributes((i * 31) % size), collection: collection),
                            with: ItemChanges(secret: try secretBytes("updated-\(i)")))
    })
    results.record("delete one (durable)", try median(samples) { i in
        try keychain.delete(Query(attributes: attributes(size + i), collection: collection))
    })
    results.record("open, locked (no KDF)", try median(max(5, samples / 20)) { _ in
        let fresh = try FileStore(directory: directory, kdf: .testing)
        _ = try fresh.open(collection).info()
    })
    results.record("open, locked: memory per item (bytes)", try openMemoryKiB(directory) * 1024 / Double(size))
    let fileSize = try FileManager.default.attributesOfItem(atPath: "\(directory)/bench.coffer")[.size] as? Int ?? 0
    results.record("file size (KiB)", Double(fileSize) / 1024)
    results.record("key slot: add a recovery key, remove it (Argon2id of tests)",
                   try slotChange(try FileStore(directory: directory, kdf: .testing).fileCollection(collection), password: password,
                                  samples: max(5, samples / 10)))
    let (acknowledged, compacted) = try compactingWrite(backend, file: "\(directory)/bench.coffer")
    results.record("a label change that compacts (one write): until acknowledged", acknowledged)
    results.record("  … until its compaction is done", compacted)
}

// Reference: the same slot change in an empty collection.
let emptyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-empty-\(UUID().uuidString)").path
let emptyPassword = try SecureBytes(Array("bench password".utf8))
let emptyStore = try FileStore(directory: emptyDirectory, kdf: .testing)
try Keychain(provider: emptyStore).createCollection(label: "Empty", id: collection, password: emptyPassword)
let emptySlotChange = try slotChange(try emptyStore.fileCollection(collection), password: emptyPassword,
                                     samples: max(5, options.samples / 10))
try? FileManager.default.removeItem(atPath: emptyDirectory)

// Reference: the cost of one fdatasync of a small append on this disk.
let probe = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-fsync-\(UUID().uuidString)").path
_ = FileManager.default.createFile(atPath: probe, contents: nil)
let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: probe))
let fsync = try median(options.samples) { _ in
    try handle.seekToEnd()
    handle.write(Data(repeating: 1, count: 200))
    try handle.synchronize()
}
try handle.close()
try? FileManager.default.removeItem(atPath: probe)

// The audit log: what recording one event costs a secret read (one write(2) and one fstat,
// no fsync), timed one by one over 100k events, rotations at the default 1 MiB included.
let auditDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-audit-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: auditDirectory, withIntermediateDirectories: true)
let auditLog = AuditLogFile(directory: auditDirectory)
let auditEvent = AuditEvent(action: .read, outcome: .ok, application: Application(encoded: "exe:/usr/bin/secret-tool"),
                            collection: .login, item: 42, label: "GitHub token for alice", detail: "creator")
let auditStart = ContinuousClock.now
let auditRecord = median(100_000) { _ in auditLog.record(auditEvent) } * 1000
let auditElapsed = (ContinuousClock.now - auditStart).components
let auditMean = (Double(auditElapsed.seconds) * 1e9 + Double(auditElapsed.attoseconds) / 1e9) / 100_000
try? FileManager.default.removeItem(atPath: auditDirectory)

// Report.
let header = ["operation (median µs)"] + options.sizes.map { "N=\($0)" }
    + zip(options.sizes, options.sizes.dropFirst()).map { "×(\($1)/\($0))" }
var lines = [header]
for row in results.rows {
    let values = row.values.map { String(format: $0 >= 100 ? "%.0f" : "%.1f", $0) }
    let ratios = zip(row.values, row.values.dropFirst()).map { String(format: "%.2f", $1 / max($0, 0.001)) }
    lines.append([row.name] + values + ratios)
}
lines.append(["one fdatasync of 200 bytes (reference)", String(format: "%.0f", fsync)])
lines.append(["audit record (100k events; median, mean incl. rotation, in ns)", String(format: "%.0f", auditRecord),
              String(format: "%.0f", auditMean)])
lines.append(["unlock: Argon2id t=\(defaults.iterations), m=\(defaults.memoryKiB / 1024) MiB, p=\(defaults.parallelism)",
              String(format: "%.0f", unlock)])
lines.append(["unlock through a recovery key's slot (HKDF)", String(format: "%.0f", unlockByRecoveryKey)])
if let unlockByTPM, let tpmTCTI {
    lines.append(["unlock through a TPM slot (\(tpmTCTI)); with a PIN", String(format: "%.0f", unlockByTPM.plain),
                  String(format: "%.0f", unlockByTPM.withPIN)])
} else {
    lines.append(["unlock through a TPM slot: not measured (set COFFER_TPM_TCTI to a TPM)"])
}
lines.append(["key slot: add a recovery key, remove it, in an empty collection (reference)", String(format: "%.0f", emptySlotChange)])
lines.append(["unlock: memory at its peak, and still held after (KiB above before)", String(format: "%.0f", unlockPeak),
              String(format: "%.0f", unlockLeft)])
let widths = (0..<(lines.map(\.count).max() ?? 0)).map { column in lines.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
for line in lines {
    print(line.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
}
