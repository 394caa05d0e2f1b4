import CofferCore
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// The audit log file in one process: its lines, its permissions, rotation, and what it does
/// when the file or the directory is not what it expects.
@Suite(.timeLimit(.minutes(5))) struct AuditLogFileTests {
    let fixture = try! StoreFixture()
    var directory: String { fixture.directory }
    var logPath: String { directory + "/audit.log" }

    let keys: TestAuditKeys

    init() throws {
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        keys = try TestAuditKeys(directory: fixture.directory, collections: [.login, CollectionID("Work_2")!])
    }

    func log(limit: Int = AuditLogFile.defaultLimit, recheck: Duration = .seconds(1)) -> AuditLogFile {
        let warnings = fixture.warnings
        return AuditLogFile(directory: directory, limit: limit, recheckInterval: recheck) { warnings.append($0) }
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    func event(_ n: Int, label: String? = nil) -> AuditEvent {
        AuditEvent(time: 1_800_000_000 + UInt64(n), action: .read, outcome: .ok,
                   application: Application(kind: .executable, name: "/usr/bin/secret-tool"),
                   collection: CollectionID("login"), item: UInt64(n), label: label ?? "item \(n)", detail: "creator")
    }

    /// A program refused in a loop writes one line, then one line with the count per
    /// interval: older lines are not rotated out, whatever the number of refusals.
    @Test func refusalsOfOneApplicationAreFoldedPerInterval() throws {
        let log = log(limit: 4096)
        let python = Application(kind: .executable, name: "/usr/bin/python3")!
        func refused(_ second: UInt64, item: ItemID = 1) -> AuditEvent {
            AuditEvent(time: 1_800_000_000 + second, action: .read, outcome: .denied, application: python,
                       collection: .login, item: item, label: "target", detail: "strict policy")
        }
        log.record(event(0))
        for n in 0..<50_000 { log.record(refused(UInt64(n % 60), item: UInt64(n % 7))) }   // one minute
        log.record(refused(61))                                                             // the next
        log.flush()
        let events = try keys.read(directory).events
        #expect(events.count == 4, "\(events)")
        #expect(events.first == event(0))
        let denied = events.filter { $0.outcome == .denied }
        #expect(denied.map(\.repeated) == [nil, 49_999, nil], "\(denied.map(\.repeated))")
        #expect(denied[1].label == nil && denied[1].item == nil && denied[1].application == python)
        #expect(size(logPath + ".1") == 0, "the log was rotated")
        // Another application's refusals, and anything allowed, are written as they come.
        #expect(events.filter { $0.outcome == .ok }.count == 1)
    }

    /// A label is written sealed to its collection's audit key: not in the file, opened only
    /// with that collection's private key; without a key it is left out.
    @Test func labelsAreSealedToTheirCollectionsKey() throws {
        let log = log()
        let label = "GitHub token for alice@example.org"
        log.record(AuditEvent(time: 1_800_000_000, action: .write, outcome: .ok, collection: .login, item: 1, label: label))
        log.record(AuditEvent(time: 1_800_000_001, action: .write, outcome: .ok, collection: CollectionID("nokey"), item: 1,
                              label: label))
        let bytes = try #require(FileManager.default.contents(atPath: logPath))
        #expect(bytes.range(of: Data("alice".utf8)) == nil, "\(String(decoding: bytes, as: UTF8.self))")
        let opened = try keys.read(directory).events
        #expect(opened.map(\.label) == [label, nil])
        #expect(opened[1].sealedLabel == nil)
        // Another collection's key (the same id elsewhere) opens nothing.
        let elsewhere = try StoreFixture()
        try FileManager.default.createDirectory(atPath: elsewhere.directory, withIntermediateDirectories: true)
        let otherKeys = try TestAuditKeys(directory: elsewhere.directory, collections: [.login])
        try FileManager.default.copyItem(atPath: logPath, toPath: elsewhere.directory + "/audit.log")
        #expect(try otherKeys.read(elsewhere.directory).events.map(\.label) == [nil, nil])
    }

    /// The count is written on a timer once its interval is over, with no event after it.
    @Test func theCountIsWrittenWhenItsIntervalIsOverWithoutAnotherEvent() throws {
        let log = AuditLogFile(directory: directory, foldInterval: 1) { _ in }
        let python = Application(kind: .executable, name: "/usr/bin/python3")!
        for _ in 0..<5 {
            log.record(AuditEvent(action: .read, outcome: .denied, application: python, collection: .login, item: 1, detail: "strict policy"))
        }
        #expect(eventually { ((try? keys.read(directory).events) ?? []).compactMap(\.repeated) == [4] },
                "\(String(describing: try? keys.read(directory).events))")
    }

    @Test func aLineIsTheDocumentedJSON() throws {
        let line = AuditLogRecord.line(for: AuditEvent(time: 1_795_000_000, action: .read, outcome: .ok,
                                                       application: Application(encoded: "exe:/usr/bin/secret-tool"),
                                                       collection: .login, item: 3, label: "GitHub", detail: "creator"))
        #expect(String(decoding: line, as: UTF8.self)
            == #"{"time":1795000000,"action":"read","outcome":"ok","app":"exe:/usr/bin/secret-tool","collection":"login","item":3,"label":"GitHub","detail":"creator"}"# + "\n")
        let bare = AuditLogRecord.line(for: AuditEvent(time: 5, action: .unlock, outcome: .failed))
        #expect(String(decoding: bare, as: UTF8.self) == #"{"time":5,"action":"unlock","outcome":"failed"}"# + "\n")
    }

    /// The lines of one batch are those of each event alone, whether consecutive events share
    /// their leading fields (one read of many items) or differ in any of them.
    @Test func aBatchOfLinesIsEachEventsLine() throws {
        let app = Application(kind: .executable, name: "/usr/bin/py\"thon")
        let other = Application(kind: .flatpak, name: "org.example.App")
        func read(_ time: UInt64, _ application: Application?, _ collection: CollectionID?, _ item: UInt64?, _ label: String?) -> AuditEvent {
            AuditEvent(time: time, action: .read, outcome: .ok, application: application, collection: collection,
                       item: item, label: label, detail: "open policy")
        }
        let events = [
            read(7, app, .login, 1, "one"), read(7, app, .login, 2, "two\n"), read(7, app, .login, 3, nil),
            read(8, app, .login, 4, "later"), read(8, other, .login, 5, "other app"), read(8, other, .session, 6, "other collection"),
            read(8, nil, .session, 7, "no app"), read(8, nil, nil, nil, nil),
            AuditEvent(time: 8, action: .read, outcome: .denied, application: nil, collection: nil, detail: "denied"),
            AuditEvent(time: 8, action: .unlock, outcome: .denied, application: nil, collection: nil),
        ]
        var batch: [UInt8] = []
        AuditLogRecord.appendLines(for: events, to: &batch)
        #expect(String(decoding: batch, as: UTF8.self) == String(decoding: events.flatMap(AuditLogRecord.line(for:)), as: UTF8.self))
    }

    /// Any label survives the trip through the file, and stays on its one line.
    @Test func everyFieldRoundTrips() throws {
        let labels = ["plain", #"say "hi""#, #"C:\path\to\"thing""#, "two\nlines\r\n", "tab\there", "nul\u{0}and\u{1}\u{1F}\u{7F}",
                      "emoji 🔑👩‍👩‍👧 and é (e\u{301})", "日本語のラベル", "line\u{2028}separator", "", "\\u0041 is not A",
                      #"{"time":1,"action":"read","outcome":"ok"}"#]
        var events = labels.enumerated().map { event($0.offset, label: $0.element) }
        events.append(AuditEvent(time: 0, action: .policy, outcome: .denied))
        events.append(AuditEvent(time: UInt64.max, action: .portal, outcome: .failed,
                                 application: Application(kind: .flatpak, name: "org.example.App"),
                                 collection: CollectionID("Work_2"), item: UInt64.max, label: nil, detail: "wrong \"password\""))
        events.append(AuditEvent(time: 7, action: .grant, outcome: .ok, application: Application(kind: .snap, name: "my-snap"),
                                 detail: "asked: allowed once"))
        let audit = log()
        events.forEach(audit.record)

        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count == events.count + 1)
        let read = try keys.read(directory)
        #expect(read.exists && read.skippedLines == 0)
        #expect(read.events == events.sorted { $0.time < $1.time })
        #expect(fixture.warnings.all.isEmpty)
    }

    @Test func theFileIsPrivateEvenWhenFoundOpen() throws {
        // The store directory FileStore makes is 0700; the log in it is 0600.
        _ = try fixture.store()
        #expect(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int == 0o700)
        log().record(event(1))
        #expect(try FileManager.default.attributesOfItem(atPath: logPath)[.posixPermissions] as? Int == 0o600)
        // A log someone made readable is made private again by the next process that opens it.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: logPath)
        log().record(event(2))
        #expect(try FileManager.default.attributesOfItem(atPath: logPath)[.posixPermissions] as? Int == 0o600)
        #expect(try keys.read(directory).events.count == 2)
    }

    @Test func rotationBoundsTheSizeAndKeepsTheNewest() throws {
        let limit = 4096
        let audit = log(limit: limit)
        var sealed = event(9999)
        sealed.sealedLabel = [UInt8](repeating: 0, count: 32 + 12 + 16 + (sealed.label ?? "").utf8.count)
        sealed.label = nil
        let lineSize = AuditLogRecord.line(for: sealed).count
        for n in 0..<2000 { audit.record(event(n)) }

        let paths = [logPath, logPath + ".1", logPath + ".2"]
        #expect(paths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        #expect(!FileManager.default.fileExists(atPath: logPath + ".3"))
        for path in paths { #expect(size(path) < limit + lineSize, "\(path) is \(size(path)) bytes") }
        #expect(paths.map(size).reduce(0, +) <= 3 * limit)

        let read = try keys.read(directory)
        #expect(read.skippedLines == 0)
        let numbers = read.events.compactMap(\.item)
        // The newest events, without a gap, up to the last one recorded.
        #expect(numbers.last == 1999)
        #expect(numbers == Array(numbers.first!...1999))
        #expect(numbers.count >= 2 * limit / lineSize)
        #expect(fixture.warnings.all.isEmpty)
    }

    /// Two writers with their own descriptors (as two processes have): when one rotates, the
    /// other notices at its next event that its file was moved away, and reopens without
    /// rotating a second time.
    @Test func aWriterWhoseFileWasRotatedReopensWithoutRotatingAgain() throws {
        let limit = 2048
        let first = log(limit: limit), second = log(limit: limit)
        second.record(event(0, label: "second, before"))
        var n = 1
        while !FileManager.default.fileExists(atPath: logPath + ".1") {
            first.record(event(n))
            n += 1
        }
        #expect(size(logPath) == 0)
        second.record(event(n, label: "second, into the rotated file"))
        #expect(!FileManager.default.fileExists(atPath: logPath + ".2"), "the second writer rotated again")
        second.record(event(n + 1, label: "second, after"))
        let current = try #require(FileManager.default.contents(atPath: logPath))
        let currentItems = current.split(separator: 0x0A).compactMap { AuditLogRecord.event(fromLine: Array($0)[...])?.item }
        #expect(currentItems == [UInt64(n + 1)])
        let labels = try keys.read(directory).events.compactMap(\.label)
        #expect(labels.contains("second, before") && labels.contains("second, into the rotated file") && labels.contains("second, after"))
    }

    @Test func aRemovedFileIsMadeAgain() throws {
        let audit = log(recheck: .zero)
        audit.record(event(1))
        try FileManager.default.removeItem(atPath: logPath)
        audit.record(event(2))
        #expect(try keys.read(directory).events.map(\.item) == [2])
    }

    @Test func tornAndDamagedLinesAreSkippedAndCounted() throws {
        let audit = log()
        for n in 0..<3 { audit.record(event(n)) }
        let handle = try #require(FileHandle(forWritingAtPath: logPath))
        try handle.seekToEnd()
        handle.write(Data("not a record\n\n   \n{\"time\":1,\"action\":\"launch\",\"outcome\":\"ok\"}\n".utf8))
        handle.write(Data(#"{"time":1800000009,"action":"read","outcome":"ok","label":"cut sh"#.utf8))
        try handle.close()
        var read = try keys.read(directory)
        #expect(read.events.map(\.item) == [0, 1, 2])
        #expect(read.skippedLines == 3)

        // The next process to record ends the torn line first, so its own line is whole.
        log().record(event(3))
        read = try keys.read(directory)
        #expect(read.events.map(\.item) == [0, 1, 2, 3])
        #expect(read.skippedLines == 3)
    }

    @Test func aSymbolicLinkIsNeverFollowed() throws {
        let target = fixture.directory + "-elsewhere"
        _ = FileManager.default.createFile(atPath: target, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createSymbolicLink(atPath: logPath, withDestinationPath: target)
        let audit = log()
        audit.record(event(1))
        audit.record(event(2))
        #expect(size(target) == 0)
        #expect(fixture.warnings.all.count == 1)
        #expect(fixture.warnings.all.first?.contains("symbolic link") == true, "\(fixture.warnings.all)")
        #expect(throws: CofferError.self) { try keys.read(directory) }
    }

    /// Something other than a file at the name (here a FIFO, which could block a writer or a
    /// reader forever) is refused at once.
    @Test func onlyARegularFileIsTaken() throws {
        #expect(mkfifo(logPath, 0o600) == 0)
        log().record(event(1))
        #expect(fixture.warnings.all.count == 1)
        #expect(fixture.warnings.all.first?.contains("not a regular file") == true, "\(fixture.warnings.all)")
        #expect(throws: CofferError.self) { try keys.read(directory) }
    }

    /// A failure is reported once, recording goes on when the cause goes away, and a new failure
    /// is reported again.
    @Test func failuresWarnOnceAndNeverThrow() throws {
        let audit = log(recheck: .zero)
        audit.record(event(0))
        try FileManager.default.removeItem(atPath: directory)
        for n in 1...3 { audit.record(event(n)) }
        #expect(fixture.warnings.all.count == 1)
        #expect(fixture.warnings.all.first?.contains("cannot be written") == true, "\(fixture.warnings.all)")

        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        audit.record(event(4))
        #expect(try keys.read(directory).events.map(\.item) == [4])
        try FileManager.default.removeItem(atPath: directory)
        audit.record(event(5))
        #expect(fixture.warnings.all.count == 2)
    }

    @Test func noLogYet() throws {
        let read = try keys.read(directory)
        #expect(!read.exists && read.events.isEmpty && read.skippedLines == 0)
        #expect(!FileManager.default.fileExists(atPath: logPath), "reading created the log")
    }

    /// Lines another JSON writer could have produced are read; anything else is not a record.
    @Test func theReaderTakesAnyJSONSpellingAndRejectsTheRest() throws {
        func parse(_ text: String) -> AuditEvent? { AuditLogRecord.event(fromLine: Array(text.utf8)[...]) }
        let spaced = parse(#" { "outcome" : "denied" , "time" : 12 ,"action":"read", "label": "\"\/\u00e9\ud83d\udd11\n", "item": null, "new": [1] } "#)
        #expect(spaced == nil, "a nested value is not part of the format")
        let escaped = parse(#" { "outcome" : "denied" , "time" : 12 ,"action":"read", "label": "\"\/\u00e9\ud83d\udd11\n", "item": null, "new": true } "#)
        #expect(escaped == AuditEvent(time: 12, action: .read, outcome: .denied, label: "\"/é🔑\n"))
        for bad in [#"{"time":12,"action":"read"}"#, #"{"time":-1,"action":"read","outcome":"ok"}"#,
                    #"{"time":012,"action":"read","outcome":"ok"}"#, #"{"time":1.5,"action":"read","outcome":"ok"}"#,
                    #"{"time":99999999999999999999,"action":"read","outcome":"ok"}"#,
                    #"{"time":1,"action":"read","outcome":"ok","app":"relative/path"}"#,
                    #"{"time":1,"action":"read","outcome":"ok","collection":"not-an-id"}"#,
                    #"{"time":1,"action":"read","outcome":"ok","label":"\ud800"}"#,
                    "{\"time\":1,\"action\":\"read\",\"outcome\":\"ok\",\"label\":\"raw\ttab\"}",
                    #"{"time":1,"action":"read","outcome":"ok"} trailing"#, #"{"time":1,"action":"read","outcome":"ok""#, ""] {
            #expect(parse(bad) == nil, "\(bad)")
        }
        #expect(AuditLogRecord.event(fromLine: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D][...]) == nil)
    }
}
