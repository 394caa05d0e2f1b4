import CofferBackup
import CofferCore
import CofferCrypto
import Testing

/// A backup written by a coffer before format version 2 still restores everything it holds.
struct VersionOneTests {
    @Test func aVersionOneBackupIsRead() throws {
        let backup = try BackupFile.read(VersionOneBackup.bytes, passphrase: try BackupFileTests.bytes(VersionOneBackup.passphrase))
        #expect(backup.aliases == ["default": CollectionID("login")!])
        let login = try #require(backup.collections.first)
        #expect(backup.collections.count == 1)
        #expect(login.id == CollectionID("login")! && login.label == "Login")
        #expect(login.created == 1_600_000_000 && login.modified == 1_600_000_100)
        #expect(login.items.map(\.label) == ["Git", "Mail"])
        #expect(login.items.map(\.attributes) == [["service": "git", "account": "ann"], ["service": "mail"]])
        #expect(login.items.map { String(decoding: $0.secret.bytes.unprotectedArray(0..<$0.secret.bytes.count), as: UTF8.self) }
            == ["git secret", "mail secret"])
        #expect(login.items.map(\.secret.contentType) == ["text/plain", "text/plain"])
        #expect(login.items.map(\.created) == [1_600_000_010, 1_600_000_030])
        #expect(login.items.map(\.modified) == [1_600_000_020, 1_600_000_040])
        // Version 1 kept no creators and no access rules: none are invented.
        #expect(login.items.allSatisfy { $0.creator == nil })
        #expect(login.policy == nil && login.grants.isEmpty)
    }
}
