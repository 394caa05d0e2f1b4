import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// Real child processes writing the store: SIGKILL in the middle of a burst, and two writers
/// at once.
@Suite(.serialized) struct StoreProcessTests {
    static var writerPath: String {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [buildDirectory.appendingPathComponent("StoreTortureWriter").path]
        // Bundled test runners live one or more levels below the build directory.
        var parent = buildDirectory
        for _ in 0..<4 {
            parent = parent.deletingLastPathComponent()
            candidates.append(parent.appendingPathComponent("StoreTortureWriter").path)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    func startWriter(_ fixture: StoreFixture, prefix: String, count: Int, maxFileBytes: Int? = nil) throws -> ChildProcess {
        try ChildProcess(Self.writerPath,
                         arguments: [fixture.directory, "work", prefix, String(count)] + (maxFileBytes.map { [String($0)] } ?? []),
                         stdin: Array("pw".utf8))
    }

    /// The item numbers a writer printed, one a line, each printed once that item was written.
    func itemNumbers(_ printed: String) -> [Int] {
        printed.split(separator: "\n").compactMap { Int($0) }
    }

    func verify(_ keychain: Keychain, prefix: String, numbers: [Int]) throws {
        for n in numbers {
            let found = try keychain.search(Query(attributes: ["writer": prefix, "n": String(n)], returnSecret: true))
            #expect(found.count == 1, "item \(prefix) \(n) was reported written but is missing")
            #expect(text(found.first?.secret) == "\(prefix)-secret-\(n)")
        }
    }

    @Test func killDuringABurstLosesNothingReported() throws {
        let fixture = try StoreFixture()
        try fixture.keychain().createCollection(label: "Work", id: work, password: password("pw"))
        let writer = try startWriter(fixture, prefix: "a", count: 100_000)
        _ = writer.waitForStdout(timeout: 30) { itemNumbers($0).count >= 300 }
        writer.send(signal: SIGKILL)
        let numbers = itemNumbers(writer.wait(timeout: 30).stdout)
        #expect(numbers.count >= 300)

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try verify(keychain, prefix: "a", numbers: numbers)
        // And the store still takes writes.
        try keychain.add(NewItem(label: "after", attributes: ["writer": "after"], secret: secret("s")), to: work)
    }

    /// A full disk (here: a file size limit) fails the write that does not fit with a clear
    /// error; everything acknowledged before stays, and the file is left whole.
    @Test func fullDiskFailsCleanlyAndLosesNothing() throws {
        let fixture = try StoreFixture()
        try fixture.keychain().createCollection(label: "Work", id: work, password: password("pw"))
        let limit = try fixture.bytes("work").count + 20_000
        let writer = try startWriter(fixture, prefix: "f", count: 10_000, maxFileBytes: limit).wait(timeout: 120)
        let numbers = itemNumbers(writer.stdout)
        #expect(writer.exitCode == 1)
        #expect(writer.stderr.contains("cannot write") && writer.stderr.contains("work.coffer"), "\(writer.stderr)")
        #expect(numbers.count > 10 && numbers.count < 10_000)
        #expect(try fixture.bytes("work").count <= limit)

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        try verify(keychain, prefix: "f", numbers: numbers)
        #expect(try keychain.search(Query(collection: work)).count == numbers.count, "a failed write left an item behind")
        #expect(!fixture.warnings.all.contains { $0.contains("unfinished write") }, "the failed write left a torn tail")
        try keychain.add(NewItem(label: "after", attributes: ["writer": "after"], secret: secret("s")), to: work)
    }

    @Test func twoWritersAtOnceLoseNothing() throws {
        let fixture = try StoreFixture()
        try fixture.keychain().createCollection(label: "Work", id: work, password: password("pw"))
        let count = 150
        let first = try startWriter(fixture, prefix: "a", count: count)
        let second = try startWriter(fixture, prefix: "b", count: count)
        // This process writes too, through its own keychain.
        let local = try fixture.keychain()
        try local.unlock(work, password: password("pw"))
        for n in 0..<50 {
            try local.add(NewItem(label: "c\(n)", attributes: ["writer": "c", "n": String(n)],
                                  secret: secret("c-secret-\(n)")), to: work)
        }
        let firstResult = first.wait(timeout: 120)
        let secondResult = second.wait(timeout: 120)
        #expect(firstResult.succeeded && secondResult.succeeded, "\(firstResult)\n\(secondResult)")

        let keychain = try fixture.keychain()
        try keychain.unlock(work, password: password("pw"))
        #expect(try keychain.search(Query(collection: work)).count == 2 * count + 50)
        try verify(keychain, prefix: "a", numbers: Array(0..<count))
        try verify(keychain, prefix: "b", numbers: Array(0..<count))
        try verify(keychain, prefix: "c", numbers: Array(0..<50))
        // The long-lived keychain sees the other processes' items without reopening.
        #expect(try local.search(Query(attributes: ["writer": "a"])).count == count)
    }
}
