import CofferTestSupport
import Foundation
import Testing

/// One rule for collection ids, with the same answers and the same messages on the files and
/// through cofferd.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CollectionIDRuleTests {
    static let longest = String(repeating: "a", count: 64)

    /// What each mode answers to the same create-collection attempts, in order.
    static func answers(_ mode: Mode) throws -> [String] {
        let w = try mode.start()
        defer { w.stop() }
        var answers: [String] = []
        for id in ["my-work", "Work", "work", "my_keys", "9lives", Self.longest, Self.longest + "a", "session",
                   "Session", "", "wörk", "login", "work"] {
            let result = try w.run(["create-collection", "--collection", id, "--password-stdin"], stdin: "pw\n")
            answers.append("\(result.status) \(result.stdout)\(result.stderr)")
        }
        // The new ids are what each mode lists, and are usable right away.
        let listed = try w.expect(0, ["collections", "--json"])
        let ids = try CLIFixture.jsonArray(listed).compactMap { $0["id"] as? String }.filter { $0 != "session" }
        answers.append(ids.sorted().joined(separator: " "))
        try w.expect(0, ["add", "--collection", Self.longest, "--service", "s", "--password-stdin"], stdin: "pw\nsecret")
        #expect(try w.expect(0, ["search", "--collection", Self.longest, "--service", "s", "--secret-only", "--password-stdin"],
                             stdin: "pw\n").stdout == "secret\n")
        return answers
    }

    @Test func theSameRuleInBothModes() throws {
        let direct = try Self.answers(.direct)
        let daemon = try Self.answers(.daemon)
        #expect(direct == daemon)
        let rule = "an id is 1 to 64 characters of A-Z, a-z, 0-9 and _ (case matters: 'Work' and 'work' are two ids)"
        #expect(direct == [
            "2 coffer: 'my-work' cannot be a collection id: \(rule) (see: coffer create-collection --help)\n",
            "0 created collection 'Work'\n",
            "0 created collection 'work'\n",
            "0 created collection 'my_keys'\n",
            "0 created collection '9lives'\n",
            "0 created collection '\(Self.longest)'\n",
            "2 coffer: '\(Self.longest)a' cannot be a collection id: \(rule) (see: coffer create-collection --help)\n",
            "2 coffer: 'session' is reserved for the daemon's in-memory collection; choose another id (see: coffer create-collection --help)\n",
            "0 created collection 'Session'\n",
            "2 coffer: '' cannot be a collection id: \(rule) (see: coffer create-collection --help)\n",
            "2 coffer: 'wörk' cannot be a collection id: \(rule) (see: coffer create-collection --help)\n",
            "4 coffer: a collection named 'login' already exists; choose another id\n",
            "4 coffer: a collection named 'work' already exists; choose another id\n",
            "9lives Session Work \(Self.longest) login my_keys work",
        ])
    }
}
