import CofferTestSupport
import Foundation
import Testing

/// `coffer alias` in both modes: list, set, remove, and what refuses.
@Suite(.timeLimit(.minutes(5))) struct AliasTests {
    @Test func onTheFiles() throws {
        let f = try CLIFixture()
        try f.createCollection("login")
        try f.createCollection("work")
        #expect(try f.run(["alias"]).stdout == "default -> login\n")
        // Making another the default takes the password of the one it was.
        let unproven = try f.run(["alias", "set", "default", "work"])
        #expect(unproven.status == 2 && unproven.stderr.contains("the password of 'login'"), "\(unproven)")
        #expect(try f.run(["alias", "set", "default", "work", "--password-stdin"], stdin: f.withPassword()).status == 0)
        #expect(try f.run(["alias", "set", "office", "work"]).status == 0)
        #expect(try f.run(["alias", "list"]).stdout == "default -> work\noffice -> work\n")
        // The default alias is what commands use without --collection.
        try f.add(["--service", "where"], secret: "in work")
        let found = try f.run(["search", "--password-stdin", "--service", "where", "--secret-only"], stdin: f.withPassword())
        #expect(found.status == 0 && found.stdout == "in work\n", "\(found.stderr)")
        #expect(try f.run(["alias", "remove", "office"]).status == 0)
        let missing = try f.run(["alias", "remove", "office"])
        #expect(missing.status == 1 && missing.stderr.contains("no alias 'office'"), "\(missing.stderr)")
        let noCollection = try f.run(["alias", "set", "mine", "nowhere"])
        #expect(noCollection.status == 1, "\(noCollection.stderr)")
        let reserved = try f.run(["alias", "set", "login", "work"])
        #expect(reserved.status == 2 && reserved.stderr.contains("collection id"), "\(reserved.stderr)")
    }

    @Test func throughTheDaemon() throws {
        let d = try CofferdFixture()
        defer { d.shutdown() }
        try d.expect(0, ["alias", "set", "mine", "login"])
        #expect(try d.expect(0, ["alias"]).stdout.contains("mine -> login"))
        // The daemon has it: its collection list names it.
        #expect(try d.expect(0, ["collections"]).stdout.contains("mine"))
        try d.expect(0, ["alias", "remove", "mine"])
        #expect(try !d.expect(0, ["alias"]).stdout.contains("mine"))
        #expect(d.filesInCofferHome().isEmpty)
    }
}
