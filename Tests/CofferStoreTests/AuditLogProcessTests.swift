import CofferCore
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// The audit log written by real child processes (`StoreTortureWriter --audit`): the umask
/// they run with, and several appending and rotating at once.
@Suite(.serialized, .timeLimit(.minutes(5))) struct AuditLogProcessTests {
    let fixture = try! StoreFixture()
    var logPath: String { fixture.directory + "/audit.log" }

    let keys: TestAuditKeys

    init() throws {
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        keys = try TestAuditKeys(directory: fixture.directory, collections: [.login, CollectionID("Work_2")!])
    }

    /// Starts a writer recording `count` events; it waits for `go` to exist ("-": starts at once).
    func startWriter(_ prefix: String, count: Int, limit: Int = AuditLogFile.defaultLimit, umask: String = "022",
                     go: String = "-") throws -> ChildProcess {
        let writer = try ChildProcess(StoreProcessTests.writerPath,
                                      arguments: ["--audit", fixture.directory, prefix, String(count), String(limit), umask, go])
        #expect(writer.waitForStdout(timeout: 60) { $0.hasPrefix("ready") }, "writer \(prefix) did not start: \(writer.stderr)")
        return writer
    }

    func finish(_ writer: ChildProcess) {
        let result = writer.wait(timeout: 120)
        #expect(result.succeeded && result.stdout.hasSuffix("done\n"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    /// Runs writers `a` and `b` with `count` events each, started together.
    func runTwoWriters(count: Int, limit: Int) throws {
        let go = fixture.directory + "-go"
        defer { try? FileManager.default.removeItem(atPath: go) }
        let writers = try ["a", "b"].map { try startWriter($0, count: count, limit: limit, go: go) }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        writers.forEach(finish)
    }

    /// The items each writer's kept events name, in the order they were read.
    func items(_ events: [AuditEvent]) -> [String: [UInt64]] {
        Dictionary(grouping: events) { $0.detail ?? "" }.mapValues { $0.compactMap(\.item) }
    }

    @Test(arguments: ["000", "277"]) func createdPrivateWhateverTheUmask(umask: String) throws {
        finish(try startWriter("u", count: 10, umask: umask))
        let attributes = try FileManager.default.attributesOfItem(atPath: logPath)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(try keys.read(fixture.directory).events.count == 10)
    }

    /// A full disk (here: a file size limit) cuts one line short and fails the rest with one
    /// warning; once there is room again, recording goes on with whole lines.
    @Test func aFullDiskWarnsOnceAndRecordingGoesOnAfterwards() throws {
        let writer = try ChildProcess(StoreProcessTests.writerPath,
                                      arguments: ["--audit", fixture.directory, "f", "100", String(AuditLogFile.defaultLimit), "022", "-", "12000"])
        let result = writer.wait(timeout: 120)
        #expect(result.succeeded && result.stdout == "ready\ndone\n", "\(result)")
        let warnings = result.stderr.split(separator: "\n")
        #expect(warnings.count == 1 && warnings[0].contains("cannot be written") && warnings[0].contains("audit.log"), "\(result.stderr)")

        let read = try keys.read(fixture.directory)
        #expect(read.skippedLines == 1)
        let numbers = read.events.compactMap(\.item)
        let fitted = numbers.prefix { $0 < 100 }
        #expect(fitted.count > 10 && fitted == ArraySlice(0..<UInt64(fitted.count)), "\(numbers)")
        #expect(numbers.dropFirst(fitted.count) == ArraySlice(100..<200))
    }

    @Test func twoProcessesAppendingAtOnceNeverMixTheirLines() throws {
        // 4,000 lines of some 560 bytes (the labels sealed, in hex): below this limit, so all in one file.
        try runTwoWriters(count: 2000, limit: 8 << 20)
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4001 && lines.last == "")
        let read = try keys.read(fixture.directory)
        #expect(read.skippedLines == 0)
        #expect(read.events.count == 4000)
        let byWriter = items(read.events)
        #expect(byWriter["writer a"] == (0..<2000).map(UInt64.init))
        #expect(byWriter["writer b"] == (0..<2000).map(UInt64.init))
        #expect(read.events.allSatisfy { $0.label?.hasPrefix("\($0.detail!.dropFirst(7)) \($0.item!) \"quoted\"") == true })
    }

    /// Past the limit, the two rotate between them (never more than two old files, never a
    /// torn line) and the disk holds at most about three times the limit.
    @Test func twoProcessesRotatingAtOnceStayBoundedAndWhole() throws {
        let limit = 32 * 1024
        try runTwoWriters(count: 2000, limit: limit)
        let paths = [logPath, logPath + ".1", logPath + ".2"]
        #expect(!FileManager.default.fileExists(atPath: logPath + ".3"))
        let sizes = paths.map { ((try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int) ?? 0 }
        let lineSize = 600   // sealed labels in hex
        #expect(sizes.reduce(0, +) <= 3 * limit + 8 * lineSize, "\(sizes)")

        let read = try keys.read(fixture.directory)
        #expect(read.skippedLines == 0)
        #expect(read.events.count >= 2 * limit / lineSize)
        let byWriter = items(read.events)
        // The newest events are kept: each writer's, in order, up to its last (unless the other
        // one ran so far ahead that every event of this one is older than what is kept).
        for writer in ["writer a", "writer b"] {
            let kept = byWriter[writer] ?? []
            #expect(kept.isEmpty || kept.last == 1999, "\(writer): \(kept.count) kept, last \(kept.suffix(5))")
            #expect(kept == kept.sorted(), "\(writer)'s events are out of order")
        }
        #expect(byWriter.values.contains { $0.last == 1999 })
    }
}
