import CofferCrypto
import CofferTestSupport
import DBusKit
import SecretServiceClient
import SecretServiceProtocol
import Foundation
import Testing

/// `coffer export` and `coffer import backup`: a backup restores exactly; a gnome-keyring
/// export opens in the real gnome-keyring.
@Suite(.timeLimit(.minutes(5))) struct ExportTests {
    /// A store with collections login (2 items) and work (1 item), and an alias.
    static func filled() throws -> CLIFixture {
        let f = try CLIFixture()
        try f.createCollection("login")
        try f.createCollection("work")
        try f.add(["--service", "git", "--account", "ånn", "--label", "Git ✓"], secret: "s3cret ✓")
        try f.add(["--service", "mail", "--content-type", "text/x-mail"], secret: "mail")
        try f.add(["--collection", "work", "--service", "vpn"], secret: "vpn secret")
        let alias = try f.run(["create-collection", "spare", "--password-stdin"], stdin: f.withPassword())
        #expect(alias.status == 0)
        return f
    }

    /// `filled()` exported to a backup with the passphrase "backup phrase": its path.
    static func backup(of f: CLIFixture) throws -> String {
        let backup = f.root + "/all.cbk"
        let password = CLIFixture.password
        let exported = try f.run(["export", "--output", backup, "--password-stdin"],
                                 stdin: "\(password)\n\(password)\n\(password)\nbackup phrase\n")
        #expect(exported.status == 0 && exported.stdout.contains("wrote 3 items"), "\(exported.stderr)")
        return backup
    }

    @Test func aBackupRestoresExactlyAndOnlyOnce() throws {
        let f = try Self.filled()
        let backup = try Self.backup(of: f)
        let password = CLIFixture.password
        let mode = try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let again = try f.run(["export", "--output", backup, "--password-stdin"], stdin: "x\n")
        #expect(again.status == 4 && again.stderr.contains("--force"), "\(again.stderr)")

        // Into an empty store.
        let other = try CLIFixture()
        let restored = try CLIFixture.runCoffer(["--data-dir", other.dataDir, "import", "backup", backup, "--password-stdin"],
                                          stdin: Array("backup phrase\nnew pw\nnew pw\nnew pw\n".utf8), environment: other.environment)
        #expect(restored.status == 0, "\(restored.stderr)")
        // Every field of every item, read over the bus from each store.
        for id in ["login", "work"] {
            let before = try f.items(of: id, password: password)
            #expect(before.count == (id == "login" ? 2 : 1))
            #expect(try other.items(of: id, password: "new pw") == before, "collection \(id)")
        }
        #expect(try other.run(["search", "--collection", "work", "--service", "vpn", "--secret-only", "--password-stdin"], stdin: "new pw\n").stdout == "vpn secret\n")

        let twice = try CLIFixture.runCoffer(["--data-dir", other.dataDir, "import", "backup", backup, "--password-stdin"],
                                       stdin: Array("backup phrase\nnew pw\nnew pw\nnew pw\n".utf8), environment: other.environment)
        #expect(twice.status == 0 && twice.stdout.contains("imported 0 items"), "\(twice.stdout)\(twice.stderr)")
        let wrong = try CLIFixture.runCoffer(["--data-dir", other.dataDir, "import", "backup", backup, "--password-stdin"],
                                       stdin: Array("not it\n".utf8), environment: other.environment)
        #expect(wrong.status == 3 && wrong.stderr.contains("passphrase"), "\(wrong.stderr)")
    }

    /// `import backup --dry-run` says what the import then does: everything on a fresh store
    /// (creating nothing), nothing once imported, and the one item deleted since. It counted
    /// every item of an existing collection as new, since it never unlocked it.
    @Test func aDryRunCountsWhatTheImportAdds() throws {
        let f = try Self.filled()
        let backup = try Self.backup(of: f)
        let other = try CLIFixture()
        // The passphrase, then a password for each collection: new ones', then existing ones'.
        let lines = "backup phrase\nnew pw\nnew pw\nnew pw\n"

        let fresh = try other.run(["import", "backup", backup, "--dry-run", "--password-stdin"], stdin: lines)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.contains("would import 2 of 2 items from \(backup) into 'login' (a new collection)"), "\(fresh.stdout)")
        #expect(fresh.stdout.contains("would import 1 of 1 items from \(backup) into 'work' (a new collection)"), "\(fresh.stdout)")
        #expect(try other.run(["collections"]).stderr.contains("no collection yet"))

        let imported = try other.run(["import", "backup", backup, "--password-stdin"], stdin: lines)
        #expect(imported.status == 0 && imported.stdout.contains("imported 2 items"), "\(imported.stdout)\(imported.stderr)")
        let again = try other.run(["import", "backup", backup, "--dry-run", "--password-stdin"], stdin: lines)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("would import 0 of 2 items from \(backup) into 'login' (2 already there)"), "\(again.stdout)")
        #expect(again.stdout.contains("would import 0 of 1 items from \(backup) into 'work' (1 already there)"), "\(again.stdout)")

        let deleted = try other.run(["delete", "--service", "mail", "--password-stdin"], stdin: "new pw\n")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let oneGone = try other.run(["import", "backup", backup, "--dry-run", "--password-stdin"], stdin: lines)
        #expect(oneGone.stdout.contains("would import 1 of 2 items from \(backup) into 'login' (1 already there)"), "\(oneGone.stdout)")
        let restored = try other.run(["import", "backup", backup, "--password-stdin"], stdin: lines)
        #expect(restored.stdout.contains("imported 1 items from \(backup) into 'login' (1 already there)"), "\(restored.stdout)")
    }

    @Test(.enabled(if: GnomeKeyringDaemon.executable != nil, "gnome-keyring-daemon is not installed"))
    func gnomeKeyringOpensAnExport() throws {
        let f = try Self.filled()
        let file = f.root + "/login.keyring"
        let exported = try f.run(["export", "--format", "gnome-keyring", "--output", file, "--password-stdin"],
                                 stdin: "\(CLIFixture.password)\nback to gk\n")
        #expect(exported.status == 0 && exported.stdout.contains("wrote 2 items of 'login'"), "\(exported.stderr)")
        let contents = [UInt8](try #require(FileManager.default.contents(atPath: file)))
        let keyring = try GnomeKeyringDaemon(password: "gk login", keyrings: ["fromcoffer": contents])
        defer { keyring.remove() }
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        let collection = SecretPath.service.appending(escaping: "collection").appending(escaping: "fromcoffer")
        let session = try client.openSession()
        try client.unlock(collection, password: try SecureBytes(Array("back to gk".utf8)), session: session)
        let served = try client.everyItem(of: collection, session: session)
        let exportedItems = try f.items(of: "login", password: CLIFixture.password)
        #expect(served.count == 2 && served == Set(exportedItems.map(\.asGnomeKeyringServesIt)),
                "gnome-keyring: \(served); Coffer: \(exportedItems)")
    }
}
