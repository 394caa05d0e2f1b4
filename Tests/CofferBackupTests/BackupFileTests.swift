import CofferBackup
import CofferCore
import CofferCrypto
import Testing

struct BackupFileTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    static let git = Application(encoded: "/usr/bin/git-credential-libsecret")!
    static let fractal = Application(encoded: "flatpak:org.gnome.Fractal")!
    static let tool = Application(encoded: "snap:tool")!
    static let digest = [UInt8](0..<32)

    /// Three collections: `login` strict, with creators and grants of every shape; `work` open
    /// and empty; `old` with no policy recorded (as read from a version 1 backup).
    static func sample() throws -> Backup {
        Backup(collections: [
            .init(id: CollectionID("login")!, label: "Login ✓", created: 1_600_000_000, modified: 1_700_000_000, items: [
                .init(label: "Ünïcode", attributes: ["service": "git", "empty": "", "xdg:schema": "org.example.Token"],
                      secret: Secret(bytes: try bytes("s3cret ✓"), contentType: "text/x-token"), created: 1_600_000_001, modified: 1_600_000_002,
                      creator: git),
                .init(label: "binary", attributes: [:], secret: Secret(bytes: try SecureBytes([0, 1, 0xFF]), contentType: "application/octet-stream"),
                      created: 3, modified: 4, creator: fractal),
                .init(label: "", attributes: ["k": "v"], secret: Secret(bytes: try SecureBytes(count: 0)), created: 5, modified: 6),
            ], policy: .strict, grants: [
                .init(application: fractal, item: 0, granted: 1_650_000_000, expires: 1_990_000_000),
                .init(application: tool, item: nil, rights: .change, granted: 1_650_000_001),
                .init(application: git, item: 2, rights: .all, granted: 1_650_000_002, executableDigest: digest),
                .init(application: git, item: nil, granted: 1_650_000_003, expires: 1_990_000_001, executableDigest: digest),
            ]),
            .init(id: CollectionID("work")!, label: "Work", created: 7, modified: 8, items: [], policy: .open),
            .init(id: CollectionID("old")!, label: "Old", created: 9, modified: 10, items: [
                .init(label: "o", attributes: [:], secret: Secret(bytes: try bytes("o")), created: 11, modified: 12),
            ], policy: nil),
        ], aliases: ["default": CollectionID("login")!, "office": CollectionID("work")!])
    }

    /// Every field of `a` and `b` is the same.
    static func expectSame(_ a: Backup, _ b: Backup) {
        #expect(a.aliases == b.aliases)
        #expect(a.collections.count == b.collections.count)
        for (x, y) in zip(a.collections, b.collections) {
            #expect(x.id == y.id && x.label == y.label && x.created == y.created && x.modified == y.modified)
            #expect(x.policy == y.policy && x.grants == y.grants, "collection \(x.id)")
            #expect(x.items.count == y.items.count)
            for (i, j) in zip(x.items, y.items) {
                #expect(i.label == j.label && i.attributes == j.attributes && i.created == j.created && i.modified == j.modified)
                #expect(i.secret.bytes == j.secret.bytes && i.secret.contentType == j.secret.contentType)
                #expect(i.creator == j.creator)
            }
        }
    }

    @Test func aBackupRestoresExactly() throws {
        let original = try Self.sample()
        let file = try BackupFile.write(original, passphrase: try Self.bytes("pass phrase"), kdf: .testing)
        #expect(file[16] == 3, "writers write version 3")
        let read = try BackupFile.read(file, passphrase: try Self.bytes("pass phrase"))
        Self.expectSame(original, read)
        // The secrets are not in the file in clear, nor who may read them.
        for clear in ["s3cret", "Ünïcode", "org.gnome.Fractal", "strict"] {
            #expect(!file.contains(bytes: Array(clear.utf8)), "\(clear) in clear")
        }
    }

    @Test func aGrantNoReaderWouldAcceptIsNotWritten() throws {
        var backup = try Self.sample()
        backup.collections[0].grants.append(.init(application: Self.tool, item: 3, granted: 1))
        #expect(throws: BackupError.self) { try BackupFile.write(backup, passphrase: try Self.bytes("p"), kdf: .testing) }
        backup = try Self.sample()
        backup.collections[0].grants.append(.init(application: Self.git, item: 0, granted: 1, executableDigest: [1, 2]))
        #expect(throws: BackupError.self) { try BackupFile.write(backup, passphrase: try Self.bytes("p"), kdf: .testing) }
    }

    @Test func everyDamageIsCaught() throws {
        let file = try BackupFile.write(try Self.sample(), passphrase: try Self.bytes("pass phrase"), kdf: .testing)
        let passphrase = try Self.bytes("pass phrase")
        #expect(throws: BackupError.wrongPassphrase) { try BackupFile.read(file, passphrase: try Self.bytes("pass phrasE")) }
        #expect(throws: BackupError.notABackup) { try BackupFile.read(Array("hello".utf8), passphrase: passphrase) }
        for unknown: UInt8 in [0, 4, 0xFF] {
            var version = file
            version[16] = unknown
            #expect(throws: BackupError.unsupportedVersion(UInt32(unknown))) { try BackupFile.read(version, passphrase: passphrase) }
        }
        // Version 2 in the header of a version 3 file: the header is authenticated.
        var older = file
        older[16] = 2
        #expect(throws: BackupError.wrongPassphrase) { try BackupFile.read(older, passphrase: passphrase) }
        // Any changed byte after the magic and version: refused, never a crash or a partial backup.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var changed = file
            let index = Int.random(in: 20..<file.count, using: &rng)
            changed[index] ^= UInt8.random(in: 1...255, using: &rng)
            #expect(throws: BackupError.self) { try BackupFile.read(changed, passphrase: passphrase) }
        }
        for length in [0, 10, 20, 40, 60, file.count - 1] {
            #expect(throws: BackupError.self) { try BackupFile.read(Array(file.prefix(length)), passphrase: passphrase) }
        }
    }
}

extension [UInt8] {
    func contains(bytes needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
