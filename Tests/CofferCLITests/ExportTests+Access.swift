import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// A backup keeps who created each item and each collection's policy and grants.
extension ExportTests {
    static let chat = Application(encoded: "flatpak:org.gnome.Fractal")!
    static let helper = Application(encoded: "/usr/bin/git-credential-libsecret")!

    /// The fixture's store opened in this process, collection `id` unlocked with `password`.
    static func store(_ f: CLIFixture, unlocking id: CollectionID, password: String = CLIFixture.password) throws -> Keychain {
        let keychain = Keychain(provider: try FileStore(directory: f.dataDir, watchChanges: false), sessionCollection: false)
        try keychain.unlock(id, password: try SecureBytes(Array(password.utf8)))
        return keychain
    }

    /// Label to creator of every item of `id`.
    static func creators(_ f: CLIFixture, of id: CollectionID, password: String = CLIFixture.password) throws -> [String: String] {
        let keychain = try store(f, unlocking: id, password: password)
        var creators: [String: String] = [:]
        for match in try keychain.search(Query(collection: id, returnAttributes: true)) {
            let metadata = try #require(match.metadata)
            creators[metadata.label] = metadata.creator?.encoded ?? "(none)"
        }
        return creators
    }

    /// `coffer access list --json` of `id`, each grant without its item number (they change on
    /// restore): application, label, granted, expires, sameBinaryOnly — sorted.
    static func grants(_ f: CLIFixture, of id: String, password: String = CLIFixture.password) throws -> [String] {
        let listed = try f.run(["access", "list", "--collection", id, "--json", "--password-stdin"], stdin: "\(password)\n")
        #expect(listed.status == 0, "\(listed.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdoutBytes)) as? [String: Any])
        let grants = try #require(object["grants"] as? [[String: Any]])
        return grants.map { grant in
            ["application", "label", "granted", "expires", "sameBinaryOnly"].map { key in
                "\(key)=\(grant[key].map { $0 is NSNull ? "null" : "\($0)" } ?? "missing")"
            }.joined(separator: " ")
        }.sorted()
    }

    static func policy(_ f: CLIFixture, of id: String, password: String = CLIFixture.password) throws -> String {
        let shown = try f.run(["policy", "--collection", id, "--password-stdin"], stdin: "\(password)\n")
        #expect(shown.status == 0, "\(shown.stderr)")
        return shown.stdout
    }

    /// `login`, strict: "Git" made by the credential helper, "Chat" by a Flatpak app, "Legacy"
    /// with no creator, "Tool" made by coffer; grants for one item (expiring), one tied to a
    /// binary, and one for the whole collection.
    static func guarded() throws -> CLIFixture {
        let f = try CLIFixture()
        try f.createCollection("login")
        do {
            let keychain = try store(f, unlocking: .login)
            for (label, service, creator) in [("Git", "git", helper), ("Chat", "chat", chat), ("Legacy", "old", nil)] as [(String, String, Application?)] {
                try keychain.add(NewItem(label: label, attributes: ["service": service],
                                         secret: Secret(bytes: try SecureBytes(Array("\(label) secret".utf8))), creator: creator),
                                 to: .login)
            }
        }
        try f.add(["--service", "tool", "--label", "Tool"], secret: "tool secret")
        let password = "\(CLIFixture.password)\n"
        for arguments in [["policy", "strict"],
                          ["access", "grant", chat.encoded, "--service", "git", "--for", "30d"],
                          ["access", "grant", "/bin/sh", "--service", "old", "--same-binary"],
                          ["access", "grant", helper.encoded]] {
            let result = try f.run(arguments + ["--password-stdin"], stdin: password)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        return f
    }

    @Test func creatorsPolicyAndGrantsAreRestored() throws {
        let f = try Self.guarded()
        let creators = try Self.creators(f, of: .login)
        #expect(creators["Git"] == Self.helper.encoded && creators["Chat"] == Self.chat.encoded && creators["Legacy"] == "(none)")
        #expect(creators["Tool"]?.hasPrefix("exe:/") == true)
        let policy = try Self.policy(f, of: "login")
        let grants = try Self.grants(f, of: "login")
        #expect(policy.hasPrefix("strict:") && grants.count == 3, "\(policy)\(grants)")
        #expect(grants.filter { $0.contains("label=null") && $0.contains("expires=null") }.count == 1, "one whole-collection grant: \(grants)")
        #expect(grants.filter { $0.contains("sameBinaryOnly=1") || $0.contains("sameBinaryOnly=true") }.count == 1, "\(grants)")

        let backup = f.root + "/login.cbk"
        let exported = try f.run(["export", "--output", backup, "--password-stdin"], stdin: "\(CLIFixture.password)\nphrase\n")
        #expect(exported.status == 0, "\(exported.stderr)")
        let other = try CLIFixture()
        let restored = try other.run(["import", "backup", backup, "--password-stdin"], stdin: "phrase\n\(CLIFixture.password)\n")
        #expect(restored.status == 0 && restored.stdout.contains("'login' is strict, as in the backup; 3 grant(s) restored"),
                "\(restored.stdout)\(restored.stderr)")

        #expect(try Self.creators(other, of: .login) == creators)
        #expect(try Self.policy(other, of: "login") == policy)
        #expect(try Self.grants(other, of: "login") == grants)
        // Restoring is audited as granting.
        let log = try other.run(["log", "--json"])
        #expect(log.stdout.components(separatedBy: "restored from a backup").count - 1 == 3, "\(log.stdout)\(log.stderr)")
    }

    @Test func mergingKeepsTheTargetsPolicyAndGrantsOnlyWhatItAdds() throws {
        let f = try Self.guarded()
        let backup = f.root + "/login.cbk"
        let exported = try f.run(["export", "--output", backup, "--password-stdin"], stdin: "\(CLIFixture.password)\nphrase\n")
        #expect(exported.status == 0, "\(exported.stderr)")
        // The target has its own login (ask), with "Tool" already in it and an item of its own.
        let other = try CLIFixture()
        try other.createCollection("login")
        try other.add(["--service", "tool", "--label", "Tool"], secret: "tool secret")
        try other.add(["--service", "mine", "--label", "Mine"], secret: "mine")
        let merged = try other.run(["import", "backup", backup, "--password-stdin"], stdin: "phrase\n\(CLIFixture.password)\n")
        #expect(merged.status == 0 && merged.stdout.contains("imported 3 items") && merged.stdout.contains("'login' keeps its policy, ask"),
                "\(merged.stdout)\(merged.stderr)")
        #expect(try Self.policy(other, of: "login").hasPrefix("ask:"))
        // The whole-collection grant became one per imported item: "Mine" and "Tool" are not opened up.
        let keychain = try Self.store(other, unlocking: .login)
        let labels = Dictionary(uniqueKeysWithValues: try keychain.search(Query(collection: .login, returnAttributes: true))
            .map { ($0.reference.item, $0.metadata!.label) })
        let given = try keychain.access(of: .login).grants.map { "\($0.application.encoded) \($0.item.flatMap { labels[$0] } ?? "every item")" }
        #expect(given.sorted() == [
            "exe:/bin/sh Legacy",
            "\(Self.helper.encoded) Chat", "\(Self.helper.encoded) Git", "\(Self.helper.encoded) Legacy",
            "\(Self.chat.encoded) Git",
        ], "\(given)")
        #expect(try Self.creators(other, of: .login)["Chat"] == Self.chat.encoded)
    }

    @Test func aGnomeKeyringExportLeavesTheRulesOut() throws {
        let f = try Self.guarded()
        let file = f.root + "/login.keyring"
        let exported = try f.run(["export", "--format", "gnome-keyring", "--output", file, "--password-stdin"],
                                 stdin: "\(CLIFixture.password)\nback to gk\n")
        #expect(exported.status == 0 && exported.stdout.contains("wrote 4 items of 'login'"), "\(exported.stderr)")
        let help = try f.run(["export", "--help"], dataDir: false)
        #expect(help.stdout.replacingOccurrences(of: "\n", with: " ").contains("gnome-keyring has no access rules"), "\(help.stdout)")
    }
}
