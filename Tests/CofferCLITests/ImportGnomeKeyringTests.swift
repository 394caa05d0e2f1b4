import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import GnomeKeyringFormat
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// `coffer import gnome-keyring` on files the real gnome-keyring-daemon wrote.
@Suite(.timeLimit(.minutes(5)), .enabled(if: GnomeKeyringDaemon.executable != nil && Executables.inPath("secret-tool") != nil,
                                         "gnome-keyring-daemon or secret-tool is not installed (scripts/setup installs them)"))
struct ImportGnomeKeyringTests {
    static let keyringPassword = "gk password ✓"

    static let bulk = 1_000

    /// A gnome-keyring home whose login keyring holds unicode, binary and empty-attribute items
    /// (stored with secret-tool) and `bulk` numbered ones, and every field of every item as
    /// gnome-keyring served them; the daemon is stopped, so the files are complete.
    ///
    /// The numbered items reach gnome-keyring in a login keyring file that Coffer writes (as
    /// `coffer export --format gnome-keyring` does), which it loads and unlocks: stored one call
    /// at a time, each would rewrite and fsync the whole file (50 s for 1,000). Storing the
    /// other two, gnome-keyring writes the whole file itself, so every byte imported is its own.
    /// The returned daemon was started again on that file (and is stopped).
    static func keyringHome(bulk: Int = bulk) throws -> (GnomeKeyringDaemon, Set<ProviderItem>) {
        // With the schema attribute libsecret sends (gnome-keyring adds it only to items it
        // reads back from its file).
        let numbered = try (0..<bulk).map { n in
            GnomeKeyring.Item(id: UInt32(n + 1), label: "item \(n)",
                              attributes: ["service": "bulk", "n": "\(n)", "xdg:schema": "org.freedesktop.Secret.Generic"],
                              secret: try SecureBytes(Array("secret \(n)".utf8)), created: 1_700_000_000, modified: 1_700_000_000)
        }
        let seed = try GnomeKeyringFile.write(GnomeKeyring(label: "Login", created: 1_700_000_000, modified: 1_700_000_000, items: numbered),
                                              password: try SecureBytes(Array(keyringPassword.utf8)))
        let writer = try GnomeKeyringDaemon(password: keyringPassword, keyrings: bulk > 0 ? ["login": seed] : [:])
        defer { writer.remove() }
        func store(_ label: String, _ attributes: [String], _ secret: [UInt8]) throws {
            let result = try writer.secretTool(["store", "--label=\(label)"] + attributes, stdin: secret)
            try #require(result.succeeded, "secret-tool store: \(result)")
        }
        try store("Ünïcode ✓", ["service", "git", "user", "ånn", "empty", ""], Array("s3cret ✓".utf8))
        try store("binary", ["service", "binary"], [0x00, 0x01, 0xFF, 0x80])
        writer.stop()
        // What it serves from that file once started again (items it reads from its file have
        // the schema attribute; those just stored do not, until it reads the file back).
        let written = try #require(FileManager.default.contents(atPath: writer.keyringsDirectory + "/login.keyring"))
        let keyring = try GnomeKeyringDaemon(password: keyringPassword, keyrings: ["login": Array(written)])
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        let served = try client.everyItem(of: SecretPath.collection(named: "login"), session: try client.openSession())
        try #require(served.count == bulk + 2)
        keyring.stop()
        return (keyring, served)
    }

    @Test func importsEverythingOnceAndNamesWhatFails() throws {
        let (keyring, served) = try Self.keyringHome()
        defer { keyring.remove() }
        let login = keyring.keyringsDirectory + "/login.keyring"
        let f = try CLIFixture()

        let dry = try f.run(["import", "gnome-keyring", "--dry-run", "--password-stdin", login], stdin: "\(Self.keyringPassword)\n")
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would import \(Self.bulk + 2) of \(Self.bulk + 2) items") && dry.stdout.contains("(a new collection)"), "\(dry.stdout)")
        #expect(try f.run(["collections"]).stdout.contains("login") == false)

        let started = Date()
        let first = try f.run(["import", "gnome-keyring", "--password-stdin", login], stdin: "\(Self.keyringPassword)\n")
        let took = Date().timeIntervalSince(started)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("imported \(Self.bulk + 2) items from \(login) into 'login'"), "\(first.stdout)")
        print("importing \(Self.bulk + 2) items took \(String(format: "%.2f", took)) s")

        // Every field of every item came over, and the new collection has the keyring's password.
        let imported = try f.items(of: "login", password: Self.keyringPassword)
        let missing = served.subtracting(imported), unexpected = imported.subtracting(served)
        #expect(missing.isEmpty && unexpected.isEmpty, "\(imported.count) imported; missing \(missing.count), e.g. \(missing.first.map(String.init(describing:)) ?? "-"); unexpected \(unexpected.count), e.g. \(unexpected.first.map(String.init(describing:)) ?? "-")")
        let password = Self.keyringPassword
        let git = try f.run(["search", "--password-stdin", "--service", "git", "--secret-only"], stdin: "\(password)\n")
        #expect(git.status == 0 && git.stdout == "s3cret ✓\n", "\(git.stderr)")
        let listed = try f.run(["search", "--password-stdin", "--service", "git", "--json"], stdin: "\(password)\n")
        let item = try #require(try CLIFixture.jsonArray(listed).first)
        #expect(item["label"] as? String == "Ünïcode ✓")
        let attributes = try #require(item["attributes"] as? [String: String])
        #expect(attributes["user"] == "ånn" && attributes["empty"] == "" && attributes["xdg:schema"] == "org.freedesktop.Secret.Generic")
        let binary = try f.run(["search", "--password-stdin", "--service", "binary", "--secret-only", "--raw"], stdin: "\(password)\n")
        #expect(binary.stdoutBytes == [0x00, 0x01, 0xFF, 0x80], "\(binary.stderr)")
        let bulk = try f.run(["search", "--all", "--password-stdin", "--service", "bulk", "--json", "--show-secret"], stdin: "\(password)\n")
        #expect(try CLIFixture.jsonArray(bulk).count == Self.bulk)

        // Again: nothing added.
        let second = try f.run(["import", "gnome-keyring", "--password-stdin", login], stdin: "\(Self.keyringPassword)\n")
        #expect(second.status == 0 && second.stdout.contains("imported 0 items") && second.stdout.contains("(\(Self.bulk + 2) already there)"), "\(second.stdout)")

        // Into a collection with a password of its own, asked after the keyring's: the
        // keyring's, tried first, counts as a wrong password, and the import waits until the
        // collection's own is checked (it failed: "too many wrong passwords"). A dry run
        // before says all would be added, and after says none (it said all: once the
        // collection existed, it never asked the collection's password).
        try f.createCollection("own")
        let both = "\(Self.keyringPassword)\n\(CLIFixture.password)\n"
        let own = ["--password-stdin", "--into", "own", login]
        let before = try f.run(["import", "gnome-keyring", "--dry-run"] + own, stdin: both)
        #expect(before.status == 0 && before.stdout.contains("would import \(Self.bulk + 2) of \(Self.bulk + 2) items from \(login) into 'own'\n"),
                "\(before.stdout)\(before.stderr)")
        let intoOwn = try f.run(["import", "gnome-keyring"] + own, stdin: both)
        #expect(intoOwn.status == 0 && intoOwn.stdout.contains("imported \(Self.bulk + 2) items from \(login) into 'own'"),
                "\(intoOwn.stdout)\(intoOwn.stderr)")
        #expect(intoOwn.stderr.contains("wrong passwords were given for 'own' before: this one is checked in"), "\(intoOwn.stderr)")
        let after = try f.run(["import", "gnome-keyring", "--dry-run"] + own, stdin: both)
        #expect(after.status == 0 && after.stdout.contains("would import 0 of \(Self.bulk + 2) items from \(login) into 'own' (\(Self.bulk + 2) already there)"),
                "\(after.stdout)\(after.stderr)")

        // A wrong password: exit 3, the file named, nothing added.
        let wrong = try f.run(["import", "gnome-keyring", "--password-stdin", "--into", "other", login], stdin: "nope\n")
        #expect(wrong.status == 3 && wrong.stderr.contains(login) && wrong.stderr.contains("wrong password"), "\(wrong.stderr)")
        #expect(try f.run(["collections"]).stdout.contains("other") == false)

        // A damaged copy: exit 5 naming it, and the good file beside it is still imported.
        let bytes = try #require(FileManager.default.contents(atPath: login))
        let damaged = f.root + "/damaged.keyring"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: damaged))
        let mixed = try f.run(["import", "gnome-keyring", "--password-stdin", "--into", "work", damaged, login],
                              stdin: "\(Self.keyringPassword)\n\(Self.keyringPassword)\n")
        #expect(mixed.status == 5 && mixed.stderr.contains(damaged) && mixed.stderr.contains("damaged"), "\(mixed.stderr)")
        #expect(mixed.stdout.contains("imported \(Self.bulk + 2) items from \(login) into 'work'"), "\(mixed.stdout)")
    }

    /// Imported items have no creator: the import says what other applications will see under
    /// the collection's policy, and --policy or --grant choose otherwise.
    @Test func whatOtherApplicationsWillSeeAndTheChoice() throws {
        let (keyring, _) = try Self.keyringHome(bulk: 0)
        defer { keyring.remove() }
        let login = keyring.keyringsDirectory + "/login.keyring"
        let f = try CLIFixture()
        let twice = "\(Self.keyringPassword)\n"

        let dry = try f.run(["import", "gnome-keyring", "--dry-run", "--password-stdin", login], stdin: twice)
        #expect(dry.status == 0 && dry.stderr.contains("2 items imported into 'login' would have no creator")
                && dry.stderr.contains("its policy is ask: every application would be asked"), "\(dry.stderr)")
        let plain = try f.run(["import", "gnome-keyring", "--password-stdin", login], stdin: twice)
        #expect(plain.status == 0 && plain.stderr.contains("2 items imported into 'login' have no creator")
                && plain.stderr.contains("coffer policy --collection login open") && plain.stderr.contains("--grant"), "\(plain.stderr)")

        // --grant: the program reads them; nothing more to say.
        let granted = try f.run(["import", "gnome-keyring", "--password-stdin", "--into", "granted", "--grant", "/usr/bin/python3", login],
                                stdin: twice)
        #expect(granted.status == 0 && !granted.stderr.contains("no creator"), "\(granted.stderr)")
        let list = try f.run(["access", "list", "--collection", "granted", "--password-stdin"], stdin: twice)
        #expect(list.stdout.split(separator: "\n").count { $0.hasPrefix("exe:/usr/bin/python3 ") } == 2, "\(list.stdout)")

        // --policy open, into an existing collection: its policy changes, and it is audited.
        let opened = try f.run(["import", "gnome-keyring", "--password-stdin", "--policy", "open", login], stdin: twice)
        #expect(opened.status == 0 && !opened.stderr.contains("no creator"), "\(opened.stderr)")
        #expect(try f.run(["policy", "--password-stdin"], stdin: twice).stdout.contains("open"))
        let log = try f.run(["log"])
        #expect(log.stdout.contains("ask -> open (coffer import)"), "\(log.stdout)")
        // A grant to an unverified process is refused before anything is read.
        let refused = try f.run(["import", "gnome-keyring", "--grant", "unverified:x", login], stdin: twice)
        #expect(refused.status == 2 && refused.stderr.contains("unverified process"), "\(refused.stderr)")
    }

    /// Without files: every keyring in gnome-keyring's directory, and its default alias.
    @Test func theDefaultDirectoryAndAlias() throws {
        let (keyring, _) = try Self.keyringHome(bulk: 10)
        defer { keyring.remove() }
        let f = try CLIFixture()
        let target = f.home + "/.local/share/keyrings"
        try FileManager.default.createDirectory(atPath: f.home + "/.local/share", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: keyring.keyringsDirectory, toPath: target)
        try "login".write(toFile: target + "/default", atomically: true, encoding: .utf8)
        let result = try f.run(["import", "gnome-keyring", "--password-stdin"], stdin: "\(Self.keyringPassword)\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("into 'login'") && result.stdout.contains("pointed the 'default' alias at 'login'"), "\(result.stdout)")
        let aliases = try f.run(["collections"])
        #expect(aliases.stdout.contains("login"), "\(aliases.stdout)")
    }
}

/// `coffer import --from-bus` from the real gnome-keyring, running.
@Suite(.timeLimit(.minutes(5)), .enabled(if: GnomeKeyringDaemon.executable != nil && Executables.inPath("secret-tool") != nil,
                                         "gnome-keyring-daemon or secret-tool is not installed (scripts/setup installs them)"))
struct ImportFromBusTests {
    @Test func everyCollectionOfTheProviderOnTheBus() throws {
        let keyring = try GnomeKeyringDaemon(password: "gk login")
        defer { keyring.remove() }
        for (label, attributes, secret) in [("Ünïcode ✓", ["service", "git", "user", "ånn"], "s3cret ✓"),
                                            ("second", ["service", "mail", "empty", ""], "mail secret")] {
            let stored = try keyring.secretTool(["store", "--label=\(label)"] + attributes, stdin: Array(secret.utf8))
            try #require(stored.succeeded, "\(stored)")
        }
        let f = try CLIFixture()
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = keyring.bus.address
        func coffer(_ arguments: [String], _ stdin: String) throws -> ChildResult {
            try CLIFixture.runCoffer(["--data-dir", f.dataDir] + arguments, stdin: Array(stdin.utf8),
                               environment: environment)
        }

        let dry = try coffer(["import", "--from-bus", "--dry-run"], "")
        #expect(dry.status == 0 && dry.stdout.contains("would import 2 of 2 items") && dry.stdout.contains("into 'login'"), "\(dry.stdout)\(dry.stderr)")
        let first = try coffer(["import", "--from-bus", "--password-stdin"], "new login pw\n")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("imported 2 items from 'Login' (/org/freedesktop/secrets/collection/login) into 'login'"), "\(first.stdout)")

        // Every field of every item, as each provider serves it.
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        let served = try client.everyItem(of: SecretPath.collection(named: "login"), session: try client.openSession())
        #expect(served.count == 2)
        #expect(try f.items(of: "login", password: "new login pw") == served)

        // A dry run now counts nothing to add (it counted 2: it never unlocked 'login').
        let dryAgain = try coffer(["import", "--from-bus", "--dry-run", "--password-stdin"], "new login pw\n")
        #expect(dryAgain.status == 0 && dryAgain.stdout.contains("would import 0 of 2 items") && dryAgain.stdout.contains("(2 already there)"),
                "\(dryAgain.stdout)\(dryAgain.stderr)")
        let again = try coffer(["import", "--from-bus", "--password-stdin"], "new login pw\n")
        #expect(again.status == 0 && again.stdout.contains("imported 0 items") && again.stdout.contains("(2 already there)"), "\(again.stdout)\(again.stderr)")
    }
}
