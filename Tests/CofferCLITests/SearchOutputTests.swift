import CofferTestSupport
import Foundation
import Testing

/// What `search` (and `collections`) print, the same in both modes: valid JSON even when
/// nothing matches, how many more matched, every collection at once, and item times.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SearchOutputTests {
    static let login = Mode.loginPassword

    /// stdout parsed as JSON (failing the test when it is not).
    static func json(_ result: ChildResult) throws -> [[String: Any]] {
        try CLIFixture.jsonArray(result)
    }

    @Test(arguments: Mode.allCases) func jsonIsValidEvenWhenNothingMatches(mode: Mode) throws {
        let w = try mode.start()
        defer { w.stop() }
        let none = try w.expect(1, ["search", "--service", "nowhere", "--json"])
        #expect(try Self.json(none).isEmpty && none.stdout == "[]\n")
        #expect(none.stderr == "coffer: no item in 'login' matches the query\n")
        try w.expect(0, ["create-collection", "--collection", "empty", "--password-stdin"], stdin: "pw\n")
        #expect(try Self.json(try w.expect(1, ["search", "--collection", "empty", "--all", "--json"])).isEmpty)
        let everywhere = try w.expect(1, ["search", "--all-collections", "--all", "--service", "nowhere", "--json"])
        #expect(try Self.json(everywhere).isEmpty)
        #expect(everywhere.stderr == "coffer: no item in any collection matches the query\n")

        // An error is not an empty result: nothing on stdout, one line on stderr.
        try w.expect(0, ["add", "--service", "mail", "--password-stdin"], stdin: "\(Self.login)\nsecret")
        try w.expect(0, ["lock"])
        let wrong = try w.expect(3, ["search", "--service", "mail", "--json", "--password-stdin"], stdin: "wrong\n")
        #expect(wrong.stdout.isEmpty && wrong.stderr.split(separator: "\n").count == 1)

        let collections = try Self.json(try w.expect(0, ["collections", "--json"]))
        let empty = try #require(collections.first { $0["id"] as? String == "empty" })
        #expect(((empty["created"] as? NSNumber)?.doubleValue ?? 0) > 1_700_000_000)
        #expect(empty["modified"] is NSNumber)
    }

    @Test(arguments: Mode.allCases) func searchSaysHowManyMoreMatched(mode: Mode) throws {
        let w = try mode.start()
        defer { w.stop() }
        for account in ["a", "b", "c"] {
            try w.expect(0, ["add", "--service", "db", "--account", account, "--password-stdin"], stdin: "\(Self.login)\n\(account)-pw")
        }
        let first = try w.expect(0, ["search", "--service", "db", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(first.stdout.hasPrefix("[login/1]\n") && !first.stdout.contains("[login/2]"))
        #expect(first.stderr == "coffer: 2 more items match the query; list them all with --all\n")
        let json = try w.expect(0, ["search", "--service", "db", "--json", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(try Self.json(json).count == 1 && json.stderr.contains("2 more items match"))
        let every = try w.expect(0, ["search", "--service", "db", "--all", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(every.stdout.contains("[login/3]") && every.stderr.isEmpty)
        let secret = try w.expect(0, ["search", "--service", "db", "--secret-only", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(secret.stdout == "a-pw\n")
        #expect(secret.stderr == "coffer: 2 more items match the query; this is the secret of login/1. Narrow the query to choose another\n")
        let one = try w.expect(0, ["search", "--service", "db", "--account", "b", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(one.stdout.contains("[login/2]") && one.stderr.isEmpty)
    }

    @Test(arguments: Mode.allCases) func allCollections(mode: Mode) throws {
        let w = try mode.start()
        defer { w.stop() }
        for (id, password) in [("work", "work-pw"), ("spare", "spare-pw")] {
            try w.expect(0, ["create-collection", "--collection", id, "--password-stdin"], stdin: "\(password)\n")
        }
        try w.expect(0, ["add", "--service", "git", "--account", "a", "--password-stdin"], stdin: "\(Self.login)\na-secret")
        try w.expect(0, ["add", "--collection", "work", "--service", "git", "--account", "b", "--password-stdin"],
                     stdin: "work-pw\nb-secret")
        try w.expect(0, ["add", "--collection", "spare", "--service", "other", "--password-stdin"], stdin: "spare-pw\nx")
        for id in ["login", "work", "spare"] { try w.expect(0, ["lock", "--collection", id]) }

        // A collection the password of which is wrong, or missing, stays locked and is said so.
        let wrong = try w.expect(3, ["search", "--all-collections", "--all", "--service", "git", "--password-stdin"],
                                 stdin: "\(Self.login)\nwrong\n")
        #expect(wrong.stdout.contains("[login/1]\nlabel = git (a)") && wrong.stdout.contains("[work/1]\nlocked = yes"))
        #expect(wrong.stderr.hasPrefix("coffer: collection 'work' stays locked (wrong password): its 1 match is listed as locked\n"))
        let missing = try w.expect(3, ["search", "--all-collections", "--all", "--service", "git", "--password-stdin", "--json"],
                                   stdin: "\(Self.login)\n")
        let rows = try Self.json(missing)
        #expect(rows.map { $0["collection"] as? String } == ["login", "work"])
        #expect(rows.map { $0["locked"] as? Bool } == [false, true] && rows[1]["label"] is NSNull)
        #expect(missing.stderr.contains("stdin ended before the password of 'work'"))

        // One line per collection with matches, in the order of 'coffer collections' ('spare' has none).
        let both = try w.expect(0, ["search", "--all-collections", "--all", "--service", "git", "--password-stdin", "--json"],
                                stdin: "\(Self.login)\nwork-pw\n")
        #expect(try Self.json(both).map { $0["label"] as? String } == ["git (a)", "git (b)"])
        #expect(try w.expect(0, ["search", "--all-collections", "--service", "git", "--account", "b", "--secret-only",
                                 "--password-stdin"], stdin: "work-pw\n").stdout == "b-secret\n")
        let first = try w.expect(0, ["search", "--all-collections", "--service", "git", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(first.stdout.contains("[login/1]") && !first.stdout.contains("[work/1]"))
        #expect(first.stderr == "coffer: 1 more item matches the query; list them all with --all\n")
        try w.expect(2, ["search", "--all-collections", "--collection", "work"])
    }

    @Test(arguments: Mode.allCases) func createdAndModifiedTimes(mode: Mode) throws {
        let w = try mode.start()
        defer { w.stop() }
        let before = UInt64(Date().timeIntervalSince1970)
        try w.expect(0, ["add", "--service", "clock", "--password-stdin"], stdin: "\(Self.login)\nsecret")
        let after = UInt64(Date().timeIntervalSince1970) + 1
        Thread.sleep(forTimeInterval: 1.2)
        try w.expect(0, ["update", "--service", "clock", "--set-label", "Clock", "--password-stdin"], stdin: "\(Self.login)\n")

        let row = try #require(try Self.json(try w.expect(0, ["search", "--service", "clock", "--json", "--password-stdin"],
                                                          stdin: "\(Self.login)\n")).first)
        let created = try #require((row["created"] as? NSNumber)?.uint64Value)
        let modified = try #require((row["modified"] as? NSNumber)?.uint64Value)
        #expect((before...after).contains(created), "\(mode): created \(created) not in \(before)...\(after)")
        #expect(modified > created, "\(mode): modified \(modified), created \(created)")

        // Text: local time (TZ=UTC here), as secret-tool prints it.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        func local(_ seconds: UInt64) -> String { formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) }
        let text = try w.expect(0, ["search", "--service", "clock", "--password-stdin"], stdin: "\(Self.login)\n")
        #expect(text.stdout.contains("label = Clock\ncreated = \(local(created))\nmodified = \(local(modified))\nlocked = no\n"),
                "\(mode): \(text.stdout)")
    }
}
