import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Synchronization

/// A fresh store directory with fast KDF parameters, removed when the fixture goes away.
final class StoreFixture {
    let directory: String
    let warnings = WarningLog()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-store-\(UUID().uuidString)").path
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func store(watchChanges: Bool = true) throws -> FileStore {
        let log = warnings
        return try FileStore(directory: directory, kdf: .testing, watchChanges: watchChanges, warn: { log.append($0) })
    }

    func keychain(watchChanges: Bool = true) throws -> Keychain { Keychain(provider: try store(watchChanges: watchChanges)) }

    func path(_ collection: String) -> String { "\(directory)/\(collection).coffer" }

    func bytes(_ collection: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(collection)))) }

    /// The file without the zero-filled space reserved after its last record (whose checksum
    /// may itself end in zero bytes).
    func records(_ collection: String) throws -> [UInt8] {
        let all = try bytes(collection)
        let lastNonZero = (all.lastIndex { $0 != 0 } ?? -1) + 1
        let end = (lastNonZero...min(lastNonZero + 4, all.count)).first { recordStart(endingAt: $0, in: all) != nil }
        return Array(all[..<(end ?? lastNonZero)])
    }

    func write(_ bytes: [UInt8], to collection: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path(collection)))
    }

    /// Runs `write` as a write that a crash interrupts before it is acknowledged: afterwards
    /// the collection's lock file, which holds its acknowledgement mark, is as it was before
    /// (a writer marks its records acknowledged only once they are durable, so a crash during
    /// the write leaves the mark as it was). The caller then leaves of the records in the file
    /// what the crash would have.
    @discardableResult
    func unacknowledged<R>(_ collection: String = "work", _ write: () throws -> R) throws -> R {
        let lockPath = "\(directory)/\(collection).lock"
        let before = FileManager.default.contents(atPath: lockPath) ?? Data()
        let result = try write()
        let lock = try FileHandle(forWritingTo: URL(fileURLWithPath: lockPath))
        defer { try? lock.close() }
        try lock.truncate(atOffset: 0)
        try lock.write(contentsOf: before)
        return result
    }
}

/// Where a record ending at `end` starts, found from its length field and checksum.
func recordStart(endingAt end: Int, in bytes: [UInt8]) -> Int? {
    func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
    guard end >= 8, end <= bytes.count else { return nil }
    return (0..<end - 8).reversed().first { start in
        u32(start) == end - start - 4 && UInt32(u32(end - 4)) == Digest.crc32(bytes[(start + 4)..<(end - 4)])
    }
}

/// Whether `error` reports the file whose name ends in `file` as damaged.
func reportsDamage(to file: String, _ error: any Error) -> Bool {
    guard case CofferError.storeCorrupt(let damaged, _) = error else { return false }
    return damaged.hasSuffix(file)
}

final class WarningLog: Sendable {
    private let messages = Mutex<[String]>([])
    func append(_ message: String) { messages.withLock { $0.append(message) } }
    var all: [String] { messages.withLock { $0 } }
}

func password(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

func secret(_ text: String) throws -> Secret { Secret(bytes: try SecureBytes(Array(text.utf8))) }

func text(_ secret: Secret?) -> String? {
    secret.map { $0.bytes.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } }
}

let work = CollectionID("work")!
