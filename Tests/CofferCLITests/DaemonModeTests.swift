import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// coffer without --data-dir while the real cofferd runs on a (private) session bus: every
/// command goes through the daemon, so the login collection it unlocked at start needs no
/// password, and coffer's own HOME never gets a store file.
@Suite struct DaemonModeTests {
    static let password = CofferdFixture.loginPassword
    static let query = ["--service", "github.com", "--account", "alice"]

    @Test func itemsWithoutPasswordAndSeenByLibsecret() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        // coffer creates the items, secret-tool (another application) reads them.
        try daemon.grant("/usr/bin/secret-tool")

        // login is unlocked in the daemon: no password, stdin is the secret alone.
        let added = try daemon.expect(0, ["add"] + Self.query, stdin: "first-token\n")
        #expect(added.stdout == "added login/1\n")

        // The real libsecret client sees it.
        let lookup = try daemon.secretTool(["lookup", "service", "github.com", "account", "alice"])
        #expect(lookup.exitCode == 0, "\(lookup)")
        #expect(lookup.stdout == "first-token")

        // Duplicate: exit 4, nothing stored.
        let duplicate = try daemon.expect(4, ["add"] + Self.query, stdin: "other")
        #expect(duplicate.stderr.hasPrefix("coffer: ") && duplicate.stderr.contains("--replace"))
        #expect(!duplicate.stderr.contains("other"))

        // --replace overwrites in place.
        let replaced = try daemon.expect(0, ["add", "--replace", "--label", "GitHub"] + Self.query, stdin: "second-token")
        #expect(replaced.stdout == "replaced login/1\n")
        #expect(try daemon.secretTool(["lookup", "service", "github.com"]).stdout == "second-token")

        // A password line given with --password-stdin is read and dropped, not stored.
        try daemon.expect(0, ["add", "--password-stdin", "--service", "api", "--account", "bot"],
                          stdin: "\(Self.password)\nbot-token")
        #expect(try daemon.secretTool(["lookup", "service", "api"]).stdout == "bot-token")

        // search: text, --show-secret, --json, --secret-only.
        let listed = try daemon.expect(0, ["search", "--service", "github.com"])
        #expect(listed.stdout.contains("[login/1]") && listed.stdout.contains("label = GitHub"))
        #expect(listed.stdout.contains("attribute.account = alice") && listed.stdout.contains("locked = no"))
        #expect(!listed.stdout.contains("second-token"))
        let shown = try daemon.expect(0, ["search", "--service", "github.com", "--show-secret"])
        #expect(shown.stdout.contains("secret = second-token"))
        let json = try daemon.expect(0, ["search", "--all", "--json", "--show-secret"])
        let objects = try CLIFixture.jsonArray(json)
        #expect(objects.count == 2)
        let first = try #require(objects.first)
        #expect(first["collection"] as? String == "login")
        #expect((first["id"] as? NSNumber)?.intValue == 1)
        #expect(first["label"] as? String == "GitHub")
        #expect(first["locked"] as? Bool == false)
        #expect(first["secret"] as? String == "second-token")
        #expect((first["attributes"] as? [String: String])?["xdg:schema"] == ItemClass.genericPassword.schema)
        let only = try daemon.expect(0, ["search", "--service", "api", "--secret-only"])
        #expect(only.stdout == "bot-token\n")
        try daemon.expect(1, ["search", "--service", "nowhere"])

        // update: label, attributes and secret.
        let updated = try daemon.expect(0, ["update", "--service", "github.com", "--set-label", "GH", "--secret"],
                                        stdin: "third-token")
        #expect(updated.stdout == "updated login/1\n")
        #expect(try daemon.secretTool(["lookup", "service", "github.com"]).stdout == "third-token")
        try daemon.expect(0, ["update", "--service", "api", "--set-attr", "service=api2", "--set-attr", "account=bot"])
        try daemon.expect(1, ["search", "--service", "api"])
        #expect(try daemon.expect(0, ["search", "--service", "api2"]).stdout.contains("attribute.service = api2"))
        try daemon.expect(1, ["update", "--service", "nowhere", "--set-label", "x"])

        // delete: several matches need --all; nothing matching is status 0.
        try daemon.expect(0, ["add", "--service", "github.com", "--account", "bob"], stdin: "bob-token")
        let ambiguous = try daemon.expect(2, ["delete", "--service", "github.com"])
        #expect(ambiguous.stderr.contains("--all"))
        let deleted = try daemon.expect(0, ["delete", "--all", "--service", "github.com"])
        #expect(deleted.stdout.split(separator: "\n").count == 2)
        #expect(try daemon.secretTool(["lookup", "service", "github.com"]).exitCode != 0)
        try daemon.expect(0, ["delete", "--service", "github.com"])

        #expect(daemon.filesInCofferHome().isEmpty, "coffer wrote to its own HOME: \(daemon.filesInCofferHome())")
    }

    @Test func lockedCollectionAsksForThePassword() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        try daemon.grant("/usr/bin/secret-tool")
        try daemon.expect(0, ["add", "--service", "mail", "--account", "carol"], stdin: "mail-secret")

        #expect(try daemon.expect(0, ["lock"]).stdout == "collection 'login' is locked\n")
        // Matching works while locked, so no match is still status 1 without a password.
        try daemon.expect(1, ["search", "--service", "nowhere"])
        // Locked, no terminal, no --password-stdin: status 2.
        let noPassword = try daemon.expect(2, ["search", "--service", "mail"])
        #expect(noPassword.stderr.contains("--password-stdin"))
        // --no-unlock lists by reference only.
        #expect(try daemon.expect(0, ["search", "--service", "mail", "--no-unlock"]).stdout.contains("locked = yes"))

        // Wrong password: status 3, one line, no password echoed.
        let wrong = try daemon.expect(3, ["search", "--password-stdin", "--service", "mail", "--show-secret"],
                                      stdin: "not the password\n")
        #expect(wrong.stderr.hasPrefix("coffer: ") && wrong.stderr.contains("wrong password"))
        #expect(!wrong.stderr.contains("not the password") && wrong.stdout.isEmpty)
        try daemon.expect(3, ["add", "--password-stdin", "--service", "x"], stdin: "nope\nsecret")

        // The right one unlocks it in the daemon...
        let shown = try daemon.expect(0, ["search", "--password-stdin", "--service", "mail", "--show-secret"],
                                      stdin: "\(Self.password)\n")
        #expect(shown.stdout.contains("secret = mail-secret"))
        // ...where it stays unlocked for the next command and for other clients.
        #expect(try daemon.expect(0, ["search", "--service", "mail", "--secret-only"]).stdout == "mail-secret\n")
        #expect(try daemon.secretTool(["lookup", "service", "mail"]).stdout == "mail-secret")

        // lock, then unlock through the daemon.
        try daemon.expect(0, ["lock", "login"])
        try daemon.expect(3, ["unlock", "--password-stdin"], stdin: "wrong\n")
        let unlocked = try daemon.expect(0, ["unlock", "--password-stdin"], stdin: "\(Self.password)\n")
        #expect(unlocked.stdout.contains("unlocked"))
        #expect(try daemon.expect(0, ["unlock"]).stdout.contains("already unlocked"))

        #expect(daemon.filesInCofferHome().isEmpty)
    }

    @Test func collectionsThroughTheDaemon() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }

        // create-collection: CreateWithMasterPassword, then the label asked for.
        let created = try daemon.expect(0, ["create-collection", "work", "--label", "Work accounts", "--password-stdin"],
                                        stdin: "work-one\n")
        #expect(created.stdout == "created collection 'work'\n")
        try daemon.expect(4, ["create-collection", "work", "--password-stdin"], stdin: "x\n")
        // (The id rules, the same in both modes: CollectionIDRuleTests.)

        let listed = try daemon.expect(0, ["collections", "--json"])
        let rows = try CLIFixture.jsonArray(listed)
        let work = try #require(rows.first { $0["id"] as? String == "work" })
        #expect(work["label"] as? String == "Work accounts")
        #expect(work["locked"] as? Bool == false)
        let login = try #require(rows.first { $0["id"] as? String == "login" })
        #expect(login["aliases"] as? [String] == ["default"])

        // A new collection is unlocked in the daemon: add without a password.
        try daemon.expect(0, ["add", "--collection", "work", "--service", "vpn"], stdin: "vpn-secret")

        // passwd: wrong current password (3), then the right one.
        try daemon.expect(3, ["passwd", "work", "--password-stdin"], stdin: "wrong\nwork-two\n")
        #expect(try daemon.expect(0, ["passwd", "work", "--password-stdin"], stdin: "work-one\nwork-two\n").stdout
            == "password of 'work' changed\n")

        // Locked: the old password is refused, the new one unlocks.
        try daemon.expect(0, ["lock", "work"])
        #expect(try daemon.expect(0, ["collections"]).stdout.contains("work     yes"))
        try daemon.expect(3, ["unlock", "work", "--password-stdin"], stdin: "work-one\n")
        try daemon.expect(0, ["unlock", "work", "--password-stdin"], stdin: "work-two\n")
        #expect(try daemon.expect(0, ["search", "--collection", "work", "--service", "vpn", "--secret-only"]).stdout
            == "vpn-secret\n")

        // delete-collection through the daemon.
        try daemon.expect(2, ["delete-collection", "work"])
        try daemon.expect(0, ["delete-collection", "work", "--yes"])
        try daemon.expect(1, ["search", "--collection", "work"])
        try daemon.expect(1, ["delete-collection", "work", "--yes"])

        #expect(daemon.filesInCofferHome().isEmpty)
    }

    /// Damage at the end of a collection file, found by cofferd: `coffer collections` (text
    /// and --json) and `coffer doctor` through the daemon say what `coffer --data-dir` says of
    /// the files, before the next change sets it aside and after. (They said nothing: coffer
    /// looked for set-aside bytes in its own default directory, which is not the daemon's
    /// here, and never at damage not set aside yet.)
    @Test func damageIsReportedThroughTheDaemonAsOnTheFiles() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        for n in 0..<3 { try daemon.expect(0, ["add", "--service", "s\(n)"], stdin: "secret \(n)") }
        // The login file cut 100 bytes into its last record while cofferd serves it.
        let login = daemon.daemonDataDir + "/login.coffer"
        let bytes = try #require(FileManager.default.contents(atPath: login).map(Array.init))
        let end = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
        try Data(bytes[..<(end - 100)]).write(to: URL(fileURLWithPath: login))

        func recovery(_ options: [String]) throws -> String? {
            let rows = try CLIFixture.jsonArray(try daemon.expect(0, options + ["collections", "--json"]))
            return try #require(rows.first { $0["id"] as? String == "login" })["recovery"] as? String
        }
        let damaged = try #require(try recovery(["--data-dir", daemon.daemonDataDir]))
        #expect(damaged.hasPrefix("damaged: 1 acknowledged record is missing"), "\(damaged)")
        #expect(try recovery([]) == damaged)
        #expect(try daemon.expect(0, ["collections"]).stderr.contains("coffer: warning: collection 'login' \(damaged)\n"))
        let doctor = try CLIFixture.jsonArray(try daemon.run(["doctor", "--json"]))
        #expect(doctor.contains { $0["check"] as? String == "collection" && $0["status"] as? String == "warning"
                                  && ($0["finding"] as? String)?.contains("'login'") == true
                                  && ($0["finding"] as? String)?.contains(damaged) == true }, "\(doctor)")

        // A change through the daemon sets the damage aside: recovered with losses, both ways.
        try daemon.expect(0, ["add", "--service", "after"], stdin: "after")
        let recovered = try #require(try recovery(["--data-dir", daemon.daemonDataDir]))
        #expect(recovered.hasPrefix("recovered with losses") && recovered.contains(daemon.daemonDataDir), "\(recovered)")
        #expect(try recovery([]) == recovered)
        #expect(daemon.filesInCofferHome().isEmpty)
    }

    @Test func dataDirAlwaysWorksOnTheFiles() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        let direct = daemon.root + "/direct"
        // The daemon has a login collection; the directory given has none.
        let listed = try daemon.expect(0, ["--data-dir", direct, "collections"])
        #expect(listed.stdout.isEmpty && listed.stderr.contains("no collection yet"))
        try daemon.expect(0, ["--data-dir", direct, "create-collection", "login", "--password-stdin"], stdin: "pw\n")
        #expect(FileManager.default.fileExists(atPath: direct + "/login.coffer"))
        // Direct mode asks for the password although the daemon's login is unlocked.
        try daemon.expect(2, ["--data-dir", direct, "add", "--service", "s"], stdin: "secret")
        #expect(daemon.filesInCofferHome().isEmpty)
    }
}
