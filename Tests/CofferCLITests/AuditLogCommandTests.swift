import CofferCore
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// `coffer log` through the built binary, on events written with `AuditLogFile` into the
/// fixture's store directory.
@Suite(.timeLimit(.minutes(5))) struct AuditLogCommandTests {
    let now = UInt64(Date().timeIntervalSince1970)
    let secretTool = Application(encoded: "exe:/usr/bin/secret-tool")!
    let flatpak = Application(kind: .flatpak, name: "org.example.Mail")!

    /// Five events: three days ago, an hour ago and now, in three collections, by two apps and the service.
    func events() -> [AuditEvent] {
        [AuditEvent(time: now - 3 * 86400, action: .write, outcome: .ok, application: secretTool, collection: .login, item: 1,
                    label: "GitHub", detail: "creator"),
         AuditEvent(time: now - 3600, action: .read, outcome: .denied, application: flatpak, collection: .login, item: 1,
                    label: "GitHub", detail: "strict policy"),
         AuditEvent(time: now - 3600, action: .unlock, outcome: .failed, collection: CollectionID("work"), label: "Work",
                    detail: "wrong password"),
         AuditEvent(time: now, action: .read, outcome: .ok, application: secretTool, collection: CollectionID("work"), item: 7,
                    label: "tab\tand \"quotes\" 🔑", detail: nil),
         AuditEvent(time: now, action: .read, outcome: .denied, application: secretTool, collection: CollectionID("other"), item: 2)]
    }

    /// The five events in a store with the collections login and work (whose audit keys the
    /// labels are sealed to; "other" has none, and its event no label).
    func fixtureWithEvents() throws -> CLIFixture {
        let fixture = try CLIFixture()
        try fixture.createCollection("login")
        try fixture.createCollection("work")
        let log = AuditLogFile(directory: fixture.dataDir) { Issue.record("warning: \($0)") }
        events().forEach(log.record)
        try "default=work\n".write(toFile: fixture.dataDir + "/aliases", atomically: true, encoding: .utf8)
        return fixture
    }

    func time(_ seconds: UInt64) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// The items (or, for collection events, the actions) `coffer log --json <arguments>` prints.
    func logged(_ fixture: CLIFixture, _ arguments: [String]) throws -> [String] {
        let result = try fixture.run(["log", "--json"] + arguments)
        #expect(result.status == 0, "\(arguments): \(result)")
        return try CLIFixture.jsonArray(result).map { object in
            (object["item"] as? Int).map { "\(object["collection"]!)/\($0)" } ?? "\(object["action"]!)"
        }
    }

    @Test func noLogYetIsSaidPlainly() throws {
        let fixture = try CLIFixture()
        let text = try fixture.run(["log"])
        #expect(text.status == 0 && text.stdout.isEmpty)
        #expect(text.stderr == "coffer: no audit log yet in \(fixture.dataDir): nothing has been recorded there\n")
        let json = try fixture.run(["log", "--json"])
        #expect(json.status == 0 && json.stdout == "[]\n")
    }

    @Test func printsOneLineAnEventOldestFirstInLocalTimeWithLabelsSealed() throws {
        let fixture = try fixtureWithEvents()
        let result = try fixture.run(["log"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr == "coffer: the labels of 'login', 'work' are sealed in the log; to see them, give the passwords: coffer log --unseal\n")
        let t = time
        #expect(result.stdout.split(separator: "\n").map(String.init) == [
            "TIME                 APPLICATION                 ACTION  OUTCOME  COLLECTION  LABEL     DETAIL",
            "\(t(now - 3 * 86400))  /usr/bin/secret-tool        write   ok       login       (sealed)  creator",
            "\(t(now - 3600))  org.example.Mail (Flatpak)  read    denied   login       (sealed)  strict policy",
            "\(t(now - 3600))  -                           unlock  failed   work        (sealed)  wrong password",
            "\(t(now))  /usr/bin/secret-tool        read    ok       work        (sealed)  -",
            "\(t(now))  /usr/bin/secret-tool        read    denied   other       #2        -",
        ], "\(result.stdout)")
    }

    /// --unseal asks each collection's password (one line each with --password-stdin, in the
    /// order of their ids); coffer records its unlocks, which it then prints too.
    @Test func unsealShowsTheLabelsOfTheCollectionsWhosePasswordsAreGiven() throws {
        let fixture = try fixtureWithEvents()
        let password = CLIFixture.password
        let result = try fixture.run(["log", "--unseal", "--password-stdin"], stdin: "\(password)\n\(password)\n")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let t = time
        // The columns are as wide as coffer's own path, in the lines of its unlocks.
        let lines = result.stdout.split(separator: "\n").map { $0.replacing(#/ {2,}/#, with: "|") }
        #expect(Array(lines.prefix(6)) == [
            "TIME|APPLICATION|ACTION|OUTCOME|COLLECTION|LABEL|DETAIL",
            "\(t(now - 3 * 86400))|/usr/bin/secret-tool|write|ok|login|GitHub|creator",
            "\(t(now - 3600))|org.example.Mail (Flatpak)|read|denied|login|GitHub|strict policy",
            "\(t(now - 3600))|-|unlock|failed|work|Work|wrong password",
            "\(t(now))|/usr/bin/secret-tool|read|ok|work|tab\\tand \"quotes\" 🔑|-",
            "\(t(now))|/usr/bin/secret-tool|read|denied|other|#2|-",
        ], "\(result.stdout)")
        #expect(lines.dropFirst(6).map { $0.contains("|unlock|ok|") && $0.hasSuffix("|password given to coffer") } == [true, true],
                "\(result.stdout)")

        // A wrong password leaves that collection's labels sealed, and says so.
        let wrong = try fixture.run(["log", "--unseal", "--password-stdin", "--collection", "work"], stdin: "nope\n")
        #expect(wrong.status == 0, "\(wrong)")
        #expect(wrong.stderr.contains("labels of 'work' stay sealed: wrong password"), "\(wrong.stderr)")
        #expect(wrong.stdout.contains("(sealed)") && !wrong.stdout.contains("Work "), "\(wrong.stdout)")
    }

    /// A label moved onto another line, or changed, does not open: it shows as damaged.
    @Test func aSealedLabelMovedToAnotherLineDoesNotOpen() throws {
        let fixture = try fixtureWithEvents()
        let path = fixture.dataDir + "/audit.log"
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        // The first line's sealed label, on the second line (same collection, another time).
        let sealed = try #require(lines[0].firstRange(of: #/"sealed":"[0-9a-f]+"/#).map { String(lines[0][$0]) })
        lines[1] = lines[1].replacing(#/"sealed":"[0-9a-f]+"/#, with: sealed)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let result = try fixture.run(["log", "--json", "--unseal", "--password-stdin", "--collection", "login"],
                                     stdin: "\(CLIFixture.password)\n")
        let labels = try CLIFixture.jsonArray(result).prefix(2).map { $0["label"] as? String }
        #expect(labels == ["GitHub", "(damaged)"], "\(result)")
    }

    @Test func jsonHasEveryFieldAndNullForNone() throws {
        let fixture = try fixtureWithEvents()
        let sealed = try CLIFixture.jsonArray(try fixture.run(["log", "--json"]))
        #expect(sealed.map { $0["label"] is NSNull } == [true, true, true, true, true])
        #expect(sealed.map { ($0["sealed"] as? String)?.count ?? 0 > 2 * 60 } == [true, true, true, true, false], "\(sealed)")
        let objects = try CLIFixture.jsonArray(try fixture.run(["log", "--json", "--unseal", "--password-stdin"],
                                                              stdin: "\(CLIFixture.password)\n\(CLIFixture.password)\n"))
        #expect(objects.count == 7)
        #expect(objects.allSatisfy { $0["sealed"] is NSNull })
        let first = objects[0]
        #expect(first["time"] as? Int == Int(now - 3 * 86400))
        #expect(first["app"] as? String == "exe:/usr/bin/secret-tool")
        #expect(first["action"] as? String == "write" && first["outcome"] as? String == "ok")
        #expect(first["collection"] as? String == "login" && first["item"] as? Int == 1)
        #expect(first["label"] as? String == "GitHub" && first["detail"] as? String == "creator")
        #expect(objects[2]["app"] is NSNull && objects[2]["item"] is NSNull)
        #expect(objects[3]["label"] as? String == "tab\tand \"quotes\" 🔑" && objects[3]["detail"] is NSNull)
        #expect(Set(objects.flatMap(\.keys)) == ["time", "action", "outcome", "app", "collection", "item", "label", "sealed", "detail", "repeated"])
    }

    @Test func eachFilter() throws {
        let fixture = try fixtureWithEvents()
        #expect(try logged(fixture, []) == ["login/1", "login/1", "unlock", "work/7", "other/2"])
        #expect(try logged(fixture, ["--collection", "login"]) == ["login/1", "login/1"])
        // An alias names the collection it points to (here: default -> work).
        #expect(try logged(fixture, ["--collection", "default"]) == ["unlock", "work/7"])
        #expect(try logged(fixture, ["--collection", "nothing"]) == [])
        #expect(try logged(fixture, ["--app", "secret-tool"]) == ["login/1", "work/7", "other/2"])
        #expect(try logged(fixture, ["--app", "exe:/usr/bin/secret-tool"]) == ["login/1", "work/7", "other/2"])
        #expect(try logged(fixture, ["--app", "/usr/bin/secret-tool"]) == ["login/1", "work/7", "other/2"])
        #expect(try logged(fixture, ["--app", "flatpak:org.example.Mail"]) == ["login/1"])
        #expect(try logged(fixture, ["--app", "example"]) == ["login/1"])
        #expect(try logged(fixture, ["--app", "snap:example"]) == [])
        #expect(try logged(fixture, ["--denied"]) == ["login/1", "other/2"])
        #expect(try logged(fixture, ["--since", "2d"]) == ["login/1", "unlock", "work/7", "other/2"])
        #expect(try logged(fixture, ["--since", "10m"]) == ["work/7", "other/2"])
        #expect(try logged(fixture, ["--since", "1h1m"]) == ["login/1", "unlock", "work/7", "other/2"])
        #expect(try logged(fixture, ["--since", "2000-01-01"]).count == 5)
        #expect(try logged(fixture, ["--since", "2999-01-01T00:00Z"]) == [])
        #expect(try logged(fixture, ["-n", "2"]) == ["work/7", "other/2"])
        #expect(try logged(fixture, ["--last", "0"]) == [])
        #expect(try logged(fixture, ["--denied", "--app", "secret-tool", "--last", "1", "--since", "1d"]) == ["other/2"])

        let none = try fixture.run(["log", "--collection", "nothing"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr == "coffer: no event matches\n")
        let one = try fixture.run(["log", "--denied", "--last", "1"])
        #expect(one.stdout.split(separator: "\n").count == 2 && one.stdout.contains("#2"))
    }

    @Test(arguments: ["yesterday", "5", "3x", "-1h", "2026-13-01", "2026-02-30", "2026-11-23T25:00", "2026-11-23 14"])
    func aSinceItCannotReadIsAUsageError(since: String) throws {
        let fixture = try fixtureWithEvents()
        let result = try fixture.run(["log", "--since=\(since)"])
        #expect(result.status == 2 && result.stdout.isEmpty, "\(since): \(result)")
        #expect(result.stderr.hasPrefix("coffer: --since wants a duration"), "\(since): \(result.stderr)")
    }

    @Test func damagedLinesAreSkippedWithAWarning() throws {
        let fixture = try fixtureWithEvents()
        let handle = try #require(FileHandle(forWritingAtPath: fixture.dataDir + "/audit.log"))
        try handle.seekToEnd()
        handle.write(Data("garbage\n{\"time\":1,\"act".utf8))
        try handle.close()
        let result = try fixture.run(["log", "--json"])
        #expect(result.status == 0)
        #expect(try CLIFixture.jsonArray(result).count == 5)
        #expect(result.stderr.hasPrefix("coffer: warning: 2 lines of the audit log could not be read (cut short by a crash, or damaged) and were skipped\n"))
    }

    @Test func rotatedFilesAreReadToo() throws {
        let fixture = try CLIFixture()
        try FileManager.default.createDirectory(atPath: fixture.dataDir, withIntermediateDirectories: true)
        let log = AuditLogFile(directory: fixture.dataDir, limit: 1000) { Issue.record("warning: \($0)") }
        for n in 0..<30 {
            log.record(AuditEvent(time: now - 100 + UInt64(n), action: .read, outcome: .ok, collection: .login, item: UInt64(n)))
        }
        #expect(FileManager.default.fileExists(atPath: fixture.dataDir + "/audit.log.2"))
        let items = try logged(fixture, [])
        #expect(items.count > 10 && items.last == "login/29")
        #expect(items == items.sorted { Int($0.dropFirst(6))! < Int($1.dropFirst(6))! })
    }

    /// The peak memory (KiB) of `coffer --data-dir <fixture> arguments`, its output thrown away.
    func peakMemory(_ fixture: CLIFixture, _ arguments: [String]) throws -> Int {
        let script = "import resource, subprocess, sys\n"
            + "status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
            + "print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        let result = try ChildProcess("/usr/bin/python3", arguments: ["-c", script, CLIFixture.executable, "--data-dir", fixture.dataDir] + arguments,
                                      environment: fixture.environment).wait(timeout: 120)
        let fields = result.stdout.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(fields.first == 0, "\(arguments): \(result)")
        return try #require(fields.last ?? nil, "\(result)")
    }

    /// A log far larger than cofferd writes (an old one, or one copied from elsewhere) is
    /// read a piece at a time: the memory it takes does not grow with the file, and every
    /// way of printing reaches its end.
    @Test func aLargeLogIsReadInMemoryThatDoesNotGrowWithIt() throws {
        let fixture = try fixtureWithEvents()
        let small = try peakMemory(fixture, ["log", "--json"])
        let line = AuditLogRecord.line(for: events()[1])
        var block: [UInt8] = []
        while block.count < 1 << 20 { block += line }
        let handle = try #require(FileHandle(forWritingAtPath: fixture.dataDir + "/audit.log"))
        for _ in 0..<8 { handle.write(Data(block)) }
        handle.write(Data(AuditLogRecord.line(for: AuditEvent(time: now, action: .lock, outcome: .ok, collection: .login))))
        try handle.close()
        for arguments in [["log"], ["log", "--last", "3"]] {
            let peak = try peakMemory(fixture, arguments)
            #expect(peak < small + 4 * 1024, "coffer \(arguments) over an 8 MiB log: peak \(peak) KiB, \(small) KiB over a small one")
        }
        #expect(try logged(fixture, ["--last", "2"]) == ["login/1", "lock"])
    }

    @Test func theHelpSaysWhatWhereAndHowBig() throws {
        let result = try CLIFixture().run(["log", "--help"], dataDir: false)
        #expect(result.status == 0)
        for words in ["never holds a secret", "audit.log", "~/.local/share/coffer", "1 MiB", "3 MiB", "--denied", "--since", "--json"] {
            #expect(result.stdout.contains(words), "the help does not say '\(words)'")
        }
    }
}
