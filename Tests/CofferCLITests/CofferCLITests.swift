import CofferTestSupport
import CofferCore
import Foundation
import Testing

/// End-to-end tests of the `coffer` command through the built binary, each in its own data
/// directory. Every unlock costs an Argon2id derivation (~0.2 s), so the flows are compact.
@Suite struct CofferCLITests {
    @Test func binaryIsBuilt() {
        #expect(FileManager.default.isExecutableFile(atPath: CLIFixture.executable),
                "coffer not found at \(CLIFixture.executable); set COFFER_CLI")
    }

    @Test func bothProgramsPrintTheOneVersion() throws {
        let cofferd = try #require(Executables.built("cofferd"))
        let daemon = try ChildProcess(cofferd, arguments: ["--version"]).wait(timeout: 30)
        let cli = try CLIFixture().run(["--version"], dataDir: false)
        #expect(daemon.stdout == "\(CofferVersion.current)\n" && daemon.status == 0, "\(daemon)")
        #expect(cli.stdout == "\(CofferVersion.current)\n" && cli.status == 0, "\(cli)")
    }

    /// What scripts/build-release asks for the packages' completions: not an unknown command.
    @Test func completionScriptsForEveryShell() throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try CLIFixture().run(["--generate-completion-script", shell], dataDir: false)
            #expect(script.status == 0 && script.stdout.contains("search") && script.stderr.isEmpty, "\(shell): \(script)")
        }
    }

    @Test func fullItemLifecycle() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        let secret = "s3cr3t-first-value"
        let query = ["--service", "github.com", "--account", "alice"]
        let id = try #require(try cli.add(query, secret: secret + "\n"))

        // The same attributes again: refused, with status 4, and the secret is not stored.
        let duplicate = try cli.run(["add", "--password-stdin"] + query, stdin: cli.withPassword("other-secret"))
        #expect(duplicate.status == 4)
        #expect(duplicate.stderr.hasPrefix("coffer: ") && duplicate.stderr.contains("--replace"))

        // --replace overwrites in place: same id.
        let replacement = "replaced-secret-value"
        let replaced = try cli.run(["add", "--password-stdin", "--replace", "--label", "GitHub"] + query,
                                   stdin: cli.withPassword(replacement))
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.hasPrefix("replaced "))
        #expect(CLIFixture.itemID(replaced.stdout) == id)

        // Human listing: attributes, no secret.
        let listed = try cli.run(["search", "--password-stdin", "--service", "github.com"], stdin: cli.withPassword())
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("[login/\(id)]"))
        #expect(listed.stdout.contains("label = GitHub"))
        #expect(listed.stdout.contains("attribute.service = github.com"))
        #expect(listed.stdout.contains("attribute.account = alice"))
        #expect(listed.stdout.contains("attribute.xdg:schema = \(ItemClass.genericPassword.schema)"))
        #expect(listed.stdout.contains("locked = no"))
        #expect(!listed.stdout.contains(replacement))

        // --show-secret shows it.
        let shown = try cli.run(["search", "--password-stdin", "--service", "github.com", "--show-secret"],
                                stdin: cli.withPassword())
        #expect(shown.stdout.contains("secret = \(replacement)"))

        // JSON.
        let json = try cli.run(["search", "--password-stdin", "--account", "alice", "--json", "--show-secret"],
                               stdin: cli.withPassword())
        #expect(json.status == 0)
        let objects = try CLIFixture.jsonArray(json)
        #expect(objects.count == 1)
        let object = try #require(objects.first)
        #expect(object["collection"] as? String == "login")
        #expect((object["id"] as? NSNumber)?.uint64Value == id)
        #expect(object["label"] as? String == "GitHub")
        #expect(object["locked"] as? Bool == false)
        #expect(object["secret"] as? String == replacement)
        let attributes = try #require(object["attributes"] as? [String: String])
        #expect(attributes == ["service": "github.com", "account": "alice",
                               "xdg:schema": ItemClass.genericPassword.schema])

        // Update label and secret of every match.
        let newSecret = "updated-secret-value"
        let updated = try cli.run(["update", "--password-stdin", "--service", "github.com", "--set-label", "GH",
                                   "--secret"], stdin: cli.withPassword(newSecret + "\n"))
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.stdout.contains("updated login/\(id)"))
        let afterUpdate = try cli.run(["search", "--password-stdin", "--service", "github.com", "--json",
                                       "--show-secret"], stdin: cli.withPassword())
        let updatedObject = try #require(try CLIFixture.jsonArray(afterUpdate).first)
        #expect(updatedObject["label"] as? String == "GH")
        #expect(updatedObject["secret"] as? String == newSecret)

        // Delete, then nothing is found (status 1, no password needed).
        let deleted = try cli.run(["delete", "--password-stdin"] + query, stdin: cli.withPassword())
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("deleted login/\(id)"))
        let gone = try cli.run(["search", "--service", "github.com"])
        #expect(gone.status == 1)
        #expect(gone.stderr.hasPrefix("coffer: "))

        // No secret and no password ever reached stderr.
        for result in cli.history {
            for needle in [secret, replacement, newSecret, "other-secret", CLIFixture.password] {
                #expect(!result.stderr.contains(needle), "stderr leaked a secret: \(result.stderr)")
            }
        }
    }

    @Test func missingItems() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        let update = try cli.run(["update", "--password-stdin", "--service", "nope", "--set-label", "x"],
                                 stdin: cli.withPassword())
        #expect(update.status == 1)
        #expect(update.stderr.hasPrefix("coffer: ") && update.stderr.contains("nothing was updated"))
        let delete = try cli.run(["delete", "--password-stdin", "--service", "nope"], stdin: cli.withPassword())
        #expect(delete.status == 0)
        #expect(delete.stderr.contains("nothing was deleted"))
        let search = try cli.run(["search", "--service", "nope"])
        #expect(search.status == 1)
        let missingCollection = try cli.run(["search", "--collection", "work"])
        #expect(missingCollection.status == 1)
        #expect(missingCollection.stderr.hasPrefix("coffer: no collection named 'work'"))
        #expect(missingCollection.stderr.contains(" collections"))
    }

    @Test func wrongPasswordChangesNothing() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        try cli.add(["--service", "mail"], secret: "original")
        let wrong = "not the password"

        let add = try cli.run(["add", "--password-stdin", "--service", "other"],
                              stdin: cli.withPassword("leaked?", password: wrong))
        #expect(add.status == 3)
        let update = try cli.run(["update", "--password-stdin", "--service", "mail", "--secret"],
                                 stdin: cli.withPassword("NEW-SECRET-XYZ", password: wrong))
        #expect(update.status == 3)
        let delete = try cli.run(["delete", "--password-stdin", "--service", "mail"],
                                 stdin: cli.withPassword(password: wrong))
        #expect(delete.status == 3)
        let unlock = try cli.run(["unlock", "--password-stdin"], stdin: cli.withPassword(password: wrong))
        #expect(unlock.status == 3)
        for result in [add, update, delete, unlock] {
            #expect(result.stderr.split(separator: "\n").last?.hasPrefix("coffer: ") == true && result.stderr.contains("wrong password"))
            #expect(!result.stderr.contains(wrong) && !result.stderr.contains("leaked?") && !result.stderr.contains("NEW-SECRET-XYZ"))
            // One error line; before it, what the throttle made coffer wait (wrong passwords
            // before this one hold the next back: 1, 2, 4 seconds).
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.dropLast().allSatisfy { $0.contains("wrong passwords were given") }, "\(result.stderr)")
        }

        // Nothing changed: one item, the original secret.
        let all = try cli.run(["search", "--password-stdin", "--all", "--json", "--show-secret"], stdin: cli.withPassword())
        let objects = try CLIFixture.jsonArray(all)
        #expect(objects.count == 1)
        #expect(objects.first?["secret"] as? String == "original")
        let ok = try cli.run(["unlock", "--password-stdin"], stdin: cli.withPassword())
        #expect(ok.status == 0)
    }

    @Test func freshHomeSaysHowToCreateACollection() throws {
        let cli = try CLIFixture()
        // No --data-dir: the store comes from HOME (~/.local/share/coffer).
        let result = try CLIFixture.runCoffer(["search", "--service", "x"], environment: cli.environment)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("coffer: no collection yet"))
        #expect(result.stderr.contains("coffer create-collection login"))
        let add = try cli.run(["add", "--service", "x"], stdin: "secret")
        #expect(add.status == 1)
        #expect(add.stderr.contains("create-collection login"))
        #expect(!add.stderr.contains("secret"))
    }

    @Test func usageErrorsExitTwo() throws {
        let cli = try CLIFixture()
        let cases: [[String]] = [
            ["frobnicate"],
            ["search", "--no-such-option"],
            ["add", "--account", "a"],                 // neither --label nor --service
            ["add", "--service", "s", "--attr", "novalue"],
            ["add", "--service", "s", "--class", "bogus"],
            ["update", "--service", "s"],              // nothing to change
            ["update", "--set-label", "x"],            // no query
            ["delete"],                                // no query and no --all
            ["create-collection", "bad id!"],
            ["search", "--secret-only", "--all"],
        ]
        for arguments in cases {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments) gave \(result.status): \(result.stderr)")
            #expect(result.stderr.hasPrefix("coffer: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let help = try cli.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("EXIT STATUS"))
        let subHelp = try cli.run(["add", "--help"])
        #expect(subHelp.status == 0 && subHelp.stdout.contains("EXAMPLES"))
    }

    @Test func noTerminalAndNoPasswordStdin() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        try cli.add(["--service", "s"], secret: "value")
        let search = try cli.run(["search", "--service", "s"])
        #expect(search.status == 2)
        #expect(search.stderr.hasPrefix("coffer: ") && search.stderr.contains("--password-stdin"))
        let create = try cli.run(["create-collection", "work"])
        #expect(create.status == 2 && create.stderr.contains("--password-stdin"))
        // --no-unlock needs no password and reports the match as locked.
        let locked = try cli.run(["search", "--service", "s", "--no-unlock", "--json"])
        #expect(locked.status == 0)
        let object = try #require(try CLIFixture.jsonArray(locked).first)
        #expect(object["locked"] as? Bool == true)
        #expect(object["label"] is NSNull)
    }

    @Test func unicodeAndBinarySecretsRoundTrip() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        let unicode = "pässwörd 🔑 \"quoted\"\\\ttab\u{1}"
        try cli.add(["--service", "unicode", "--label", "Ünïcode \"label\"\nline2"], secret: unicode + "\n")
        let text = try cli.run(["search", "--password-stdin", "--service", "unicode", "--secret-only"],
                               stdin: cli.withPassword())
        #expect(text.status == 0)
        #expect(text.stdout == unicode + "\n")
        let json = try cli.run(["search", "--password-stdin", "--service", "unicode", "--json", "--show-secret"],
                               stdin: cli.withPassword())
        let object = try #require(try CLIFixture.jsonArray(json).first)
        #expect(object["secret"] as? String == unicode)
        #expect(object["label"] as? String == "Ünïcode \"label\"\nline2")

        // Every byte value, with a trailing newline that --raw keeps.
        let binary = (0...255).map { UInt8($0) } + [0xFF, 0xFE, 0x00, 0x0A]
        let add = try cli.run(["add", "--password-stdin", "--raw", "--service", "binary"],
                              stdin: Array("\(CLIFixture.password)\n".utf8) + binary)
        #expect(add.status == 0, "\(add.stderr)")
        let raw = try cli.run(["search", "--password-stdin", "--service", "binary", "--secret-only", "--raw"],
                              stdin: cli.withPassword())
        #expect(raw.status == 0)
        #expect(raw.stdoutBytes == binary)
        let binaryJSON = try cli.run(["search", "--password-stdin", "--service", "binary", "--json", "--show-secret"],
                                     stdin: cli.withPassword())
        let binaryObject = try #require(try CLIFixture.jsonArray(binaryJSON).first)
        let encoded = try #require(binaryObject["secret_base64"] as? String)
        #expect(Data(base64Encoded: encoded).map { [UInt8]($0) } == binary)
        // Human output escapes control characters instead of sending them to the terminal.
        let human = try cli.run(["search", "--password-stdin", "--service", "unicode", "--show-secret"],
                                stdin: cli.withPassword())
        #expect(!human.stdoutBytes.contains(1))
        #expect(human.stdout.contains("label = Ünïcode \"label\"\\nline2"))
        #expect(!cli.history.contains { $0.stderrBytes.contains(bytes: binary) || $0.stderr.contains(unicode) })
    }

    @Test func passwordChange() throws {
        let cli = try CLIFixture()
        try cli.createCollection("work")
        try cli.add(["--collection", "work", "--service", "s"], secret: "kept")
        let newPassword = "a new password"
        let change = try cli.run(["passwd", "work", "--password-stdin"],
                                 stdin: Array("\(CLIFixture.password)\n\(newPassword)\n".utf8))
        #expect(change.status == 0, "\(change.stderr)")
        let old = try cli.run(["unlock", "work", "--password-stdin"], stdin: cli.withPassword())
        #expect(old.status == 3)
        let new = try cli.run(["search", "--collection", "work", "--password-stdin", "--service", "s", "--secret-only"],
                              stdin: cli.withPassword(password: newPassword))
        #expect(new.status == 0)
        #expect(new.stdout == "kept\n")
        let wrongOld = try cli.run(["passwd", "work", "--password-stdin"], stdin: Array("wrong\nwhatever\n".utf8))
        #expect(wrongOld.status == 3)
        let missingLine = try cli.run(["passwd", "work", "--password-stdin"], stdin: Array("\(newPassword)\n".utf8))
        #expect(missingLine.status == 2)
        #expect(!cli.history.contains { $0.stderr.contains(newPassword) || $0.stderr.contains(CLIFixture.password) })
    }

    @Test func storeFilesArePrivate() throws {
        let cli = try CLIFixture()
        try cli.createCollection()
        try cli.add(["--service", "s"], secret: "x")
        let directory = try FileManager.default.attributesOfItem(atPath: cli.dataDir)
        #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.dataDir)
        #expect(names.contains("login.coffer"))
        for name in names {
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.dataDir + "/" + name)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name) is not 0600")
        }

        // A damaged file: status 5, one line saying what to do, the file left alone.
        let path = cli.dataDir + "/login.coffer"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for index in 16..<24 { bytes[index] ^= 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let search = try cli.run(["search", "--password-stdin", "--service", "s"], stdin: cli.withPassword())
        #expect(search.status == 5)
        #expect(search.stderr.hasPrefix("coffer: ") && search.stderr.contains("damaged"))
        #expect(search.stderr.split(separator: "\n").count == 1)
        #expect(try cli.run(["collections"]).status == 5)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    @Test func collectionsAndSeveralMatches() throws {
        let cli = try CLIFixture()
        try cli.createCollection("work")
        #expect(try cli.run(["create-collection", "work", "--password-stdin"], stdin: cli.withPassword()).status == 4)
        // The first collection becomes the default even though it is not 'login'.
        try cli.add(["--service", "db", "--account", "a"], secret: "1")
        try cli.add(["--service", "db", "--account", "b"], secret: "2")
        let listing = try cli.run(["collections", "--json"])
        let collection = try #require(try CLIFixture.jsonArray(listing).first)
        #expect(collection["id"] as? String == "work")
        #expect((collection["items"] as? NSNumber)?.intValue == 2)
        #expect(collection["aliases"] as? [String] == ["default"])

        let first = try cli.run(["search", "--password-stdin", "--service", "db", "--json"], stdin: cli.withPassword())
        #expect(try CLIFixture.jsonArray(first).count == 1)
        let both = try cli.run(["search", "--password-stdin", "--service", "db", "--json", "--all"],
                               stdin: cli.withPassword())
        #expect(try CLIFixture.jsonArray(both).count == 2)

        let ambiguous = try cli.run(["delete", "--password-stdin", "--service", "db"], stdin: cli.withPassword())
        #expect(ambiguous.status == 2 && ambiguous.stderr.contains("--all"))
        let deleteAll = try cli.run(["delete", "--password-stdin", "--service", "db", "--all"], stdin: cli.withPassword())
        #expect(deleteAll.status == 0)
        #expect(deleteAll.stdout.split(separator: "\n").count == 2)

        let refused = try cli.run(["delete-collection", "work"])
        #expect(refused.status == 2 && refused.stderr.contains("--yes"))
        let removed = try cli.run(["delete-collection", "work", "--yes"])
        #expect(removed.status == 0)
        #expect(try cli.run(["collections", "--json"]).stdout == "[]\n")
    }
}
