import CofferBackup
import CofferCore
import CofferCrypto
import Testing

struct BackupFileTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    static func sample() throws -> Backup {
        Backup(collections: [
            .init(id: CollectionID("login")!, label: "Login ✓", created: 1_600_000_000, modified: 1_700_000_000, items: [
                .init(label: "Ünïcode", attributes: ["service": "git", "empty": "", "xdg:schema": "org.example.Token"],
                      secret: Secret(bytes: try bytes("s3cret ✓"), contentType: "text/x-token"), created: 1_600_000_001, modified: 1_600_000_002),
                .init(label: "binary", attributes: [:], secret: Secret(bytes: try SecureBytes([0, 1, 0xFF]), contentType: "application/octet-stream"),
                      created: 3, modified: 4),
                .init(label: "", attributes: ["k": "v"], secret: Secret(bytes: try SecureBytes(count: 0)), created: 5, modified: 6),
            ]),
            .init(id: CollectionID("work")!, label: "Work", created: 7, modified: 8, items: []),
        ], aliases: ["default": CollectionID("login")!, "office": CollectionID("work")!])
    }

    @Test func aBackupRestoresExactly() throws {
        let original = try Self.sample()
        let file = try BackupFile.write(original, passphrase: try Self.bytes("pass phrase"), kdf: .testing)
        let read = try BackupFile.read(file, passphrase: try Self.bytes("pass phrase"))
        #expect(read.aliases == original.aliases)
        #expect(read.collections.count == original.collections.count)
        for (a, b) in zip(original.collections, read.collections) {
            #expect(a.id == b.id && a.label == b.label && a.created == b.created && a.modified == b.modified)
            #expect(a.items.count == b.items.count)
            for (x, y) in zip(a.items, b.items) {
                #expect(x.label == y.label && x.attributes == y.attributes && x.created == y.created && x.modified == y.modified)
                #expect(x.secret.bytes == y.secret.bytes && x.secret.contentType == y.secret.contentType)
            }
        }
        // The secrets are not in the file in clear.
        #expect(!file.contains(bytes: Array("s3cret".utf8)) && !file.contains(bytes: Array("Ünïcode".utf8)))
    }

    @Test func everyDamageIsCaught() throws {
        let file = try BackupFile.write(try Self.sample(), passphrase: try Self.bytes("pass phrase"), kdf: .testing)
        let passphrase = try Self.bytes("pass phrase")
        #expect(throws: BackupError.wrongPassphrase) { try BackupFile.read(file, passphrase: try Self.bytes("pass phrasE")) }
        #expect(throws: BackupError.notABackup) { try BackupFile.read(Array("hello".utf8), passphrase: passphrase) }
        var version = file
        version[16] = 2
        #expect(throws: BackupError.unsupportedVersion(2)) { try BackupFile.read(version, passphrase: passphrase) }
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
