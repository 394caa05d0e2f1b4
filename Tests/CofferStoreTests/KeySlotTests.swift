import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import SystemKit
import Testing

/// Key slots: several ways into one collection (its password, a recovery key), each opening it
/// alone; changes rewrite the small keys file only; a changed or swapped slot is damage.
@Suite(.timeLimit(.minutes(5))) struct KeySlotTests {
    let legacy = CollectionID("legacy")!

    /// A store over `fixture` whose throttle reads `clock`, and its collection `work` (created,
    /// with `items` items).
    static func collection(_ fixture: StoreFixture, clock: TimeSource = .system, items: Int = 1) throws -> (Keychain, FileCollection) {
        let store = try FileStore(directory: fixture.directory, kdf: .testing, watchChanges: true, warn: { _ in },
                                  beforeFlush: {}, clock: clock)
        let keychain = Keychain(provider: store)
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        for index in 0..<items {
            try keychain.add(NewItem(label: "Item \(index)", attributes: ["n": "\(index)"], secret: secret("secret \(index)")), to: work)
        }
        return (keychain, try store.fileCollection(work))
    }

    func keysPath(_ fixture: StoreFixture, _ id: String = "work") -> String { "\(fixture.directory)/\(id).keys" }

    @Test func aNewCollectionKeepsItsPasswordInASlotOfItsKeysFile() throws {
        let fixture = try StoreFixture()
        let (_, collection) = try Self.collection(fixture)
        let slots = try collection.keySlots()
        #expect(slots.map(\.kind) == [.password])
        #expect(FileManager.default.fileExists(atPath: keysPath(fixture)))
        #expect(try collection.withFreshState { $0.log.header.formatVersion } == 2)
    }

    @Test func aRecoveryKeyOpensTheCollectionAloneAndGivesItANewPassword() throws {
        let fixture = try StoreFixture()
        let (keychain, collection) = try Self.collection(fixture)
        let (recoveryKey, slot) = try collection.addRecoveryKey(password: password("pw"))
        #expect(slot.kind == .recoveryKey)
        #expect(try collection.keySlots().map(\.kind) == [.password, .recoveryKey])
        // What the user types back: the text shown, in lower case with spaces for dashes.
        let shown = try recoveryKey.text().view.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: " ") : Character(UnicodeScalar($0)).lowercased().utf8.first! }
        let typed = try RecoveryKey(typed: try SecureBytes(shown))

        try keychain.lock(work)
        try collection.unlock(recoveryKey: typed)
        #expect(!collection.isLocked)
        try collection.recover(with: typed, newPassword: password("new pw"))
        try keychain.lock(work)
        #expect(throws: CofferError.authenticationFailed) { try collection.unlock(password: password("pw")) }
        try unlockAfterTheWait(keychain, work, password("new pw"))
        let found = try keychain.search(Query(attributes: ["n": "0"], returnSecret: true))
        #expect(text(found.first?.secret) == "secret 0")
        // The recovery key still opens it; the slots are the same two.
        try keychain.lock(work)
        try Keychain.waitingOutThrottle { () throws(CofferError) in try collection.unlock(recoveryKey: typed) }
        #expect(try collection.keySlots().map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.password, .recoveryKey])
    }

    /// Adding, removing and re-sealing slots of a collection with items leaves its file as it
    /// was, byte for byte: what they cost does not grow with the items.
    @Test func slotChangesLeaveTheCollectionFileAlone() throws {
        let fixture = try StoreFixture()
        let (_, collection) = try Self.collection(fixture, items: 200)
        let before = try fixture.bytes("work")
        let identity = try PosixFile.identity(of: fixture.path("work"))?.identity
        let (_, slot) = try collection.addRecoveryKey(password: password("pw"))
        try collection.changePassword(from: password("pw"), to: password("pw2"))
        try collection.removeKeySlot(slot.id, password: password("pw2"))
        #expect(try fixture.bytes("work") == before)
        #expect(try PosixFile.identity(of: fixture.path("work"))?.identity == identity)
        #expect(try collection.keySlots().map(\.kind) == [.password])
    }

    @Test func thePasswordSlotStaysAndAnUnknownSlotIsAnError() throws {
        let fixture = try StoreFixture()
        let (_, collection) = try Self.collection(fixture)
        let passwordSlot = try #require(try collection.keySlots().first)
        #expect(throws: CofferError.self) { try collection.removeKeySlot(passwordSlot.id, password: password("pw")) }
        #expect(throws: CofferError.self) { try collection.removeKeySlot(99, password: password("pw")) }
        #expect(try collection.keySlots().count == 1)
        // Only someone who opens the collection adds a slot.
        #expect(throws: CofferError.authenticationFailed) { _ = try collection.addRecoveryKey(password: password("wrong")) }
        #expect(try collection.keySlots().count == 1)
    }

    /// A byte of a slot changed, a slot added from another collection's keys, another
    /// collection's keys file put in place, a truncated or missing keys file: each is damage,
    /// reported as such, and never opens the collection.
    @Test func aChangedOrSwappedSlotIsDamage() throws {
        let fixture = try StoreFixture()
        let (keychain, collection) = try Self.collection(fixture)
        _ = try collection.addRecoveryKey(password: password("pw"))
        try keychain.lock(work)
        let path = keysPath(fixture)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))

        // The recovery slot's salt (it is the last slot; its sealed key and the MAC follow).
        var changed = original
        changed[changed.count - 32 - 48 - 4 - 12 - 5] ^= 1
        try Data(changed).write(to: URL(fileURLWithPath: path))
        #expect { try collection.unlock(password: password("pw")) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect(collection.isLocked)

        for cut in [0, 10, original.count - 1] {
            try Data(original[..<cut]).write(to: URL(fileURLWithPath: path))
            #expect { try collection.unlock(password: password("pw")) } throws: { reportsDamage(to: "work.keys", $0) }
        }
        try FileManager.default.removeItem(atPath: path)
        #expect { try collection.unlock(password: password("pw")) } throws: { reportsDamage(to: "work.keys", $0) }
        // What `coffer doctor` reads, without a password, says so too.
        #expect { try FileStore.inspect(directory: fixture.directory, id: work) } throws: { reportsDamage(to: "work.keys", $0) }

        // Another collection's keys file, which its own password opens.
        try keychain.createCollection(label: "Other", id: CollectionID("other")!, password: password("theirs"))
        try FileManager.default.copyItem(atPath: keysPath(fixture, "other"), toPath: path)
        #expect { try collection.unlock(password: password("theirs")) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect { try FileStore.inspect(directory: fixture.directory, id: work) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect(collection.isLocked)

        try Data(original).write(to: URL(fileURLWithPath: path))
        #expect(try FileStore.inspect(directory: fixture.directory, id: work).itemCount == 1)
        let right = try password("pw")
        try Keychain.waitingOutThrottle { () throws(CofferError) in try collection.unlock(password: right) }
        #expect(!collection.isLocked)
    }

    /// A keys file with two password slots is damage before any password is tried: a
    /// collection has one password, and a second slot of that kind would be a second way in.
    @Test func aKeysFileWithTwoPasswordSlotsIsDamage() throws {
        let fixture = try StoreFixture()
        let (keychain, collection) = try Self.collection(fixture)
        try keychain.lock(work)
        let path = keysPath(fixture)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let slot = try KeySlotsFile.decode(original, file: path).slots[0]
        let twin = KeySlot(id: 2, kind: .password, created: slot.created, kdf: slot.kdf, tpm: nil, salt: slot.salt, nonce: slot.nonce,
                           sealedKey: slot.sealedKey)
        var w = ByteWriter(capacity: 512)
        w.raw(Array(original[..<26]))
        w.u8(2)
        slot.encode(into: &w)
        twin.encode(into: &w)
        w.raw(Array(original.suffix(32)))
        try Data(w.bytes).write(to: URL(fileURLWithPath: path))
        // Refused as read, before any guess is tried against it (and counted).
        #expect { try collection.unlock(password: password("a guess")) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect(collection.secondsBeforeNextUnlock == 0)
    }

    /// A FIFO in the keys file's place is damage, not an unlock that waits forever.
    @Test func aFIFOInPlaceOfTheKeysFileIsDamage() throws {
        let fixture = try StoreFixture()
        let (keychain, collection) = try Self.collection(fixture)
        try keychain.lock(work)
        collection.lock()
        try FileManager.default.removeItem(atPath: keysPath(fixture))
        #expect(mkfifo(keysPath(fixture), 0o600) == 0)
        #expect { try collection.unlock(password: password("pw")) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect { try collection.keySlots() } throws: { reportsDamage(to: "work.keys", $0) }
    }

    /// A recovery key offered to a collection that has no recovery slot is told so, and is not
    /// counted as a wrong guess.
    @Test func aRecoveryKeyForACollectionWithoutOneIsNotAGuess() throws {
        let fixture = try StoreFixture()
        let clock = TimeSource.manual(at: 1_800_000_000_000)
        let (keychain, collection) = try Self.collection(fixture, clock: clock)
        try keychain.lock(work)
        #expect { try collection.unlock(recoveryKey: try RecoveryKey.generate()) } throws: {
            "\($0)".contains("no recovery key slot")
        }
        #expect { try collection.recover(with: try RecoveryKey.generate(), newPassword: password("x")) } throws: {
            "\($0)".contains("no recovery key slot")
        }
        #expect(collection.secondsBeforeNextUnlock == 0)
        try collection.unlock(password: password("pw"))
    }

    /// A keys file a crash left half-written beside the real one (a writer that is gone) is
    /// removed when the store is next opened; one of a writer still running is left alone.
    @Test func aKeysFileACrashLeftBesideTheRealOneIsCleanedUp() throws {
        let fixture = try StoreFixture()
        _ = try Self.collection(fixture)
        let gone = "\(fixture.directory)/work.keys.new-0011223344556677-4194303"
        let running = "\(fixture.directory)/work.keys.new-0011223344556677-1"
        for path in [gone, running] { try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path)) }
        _ = try fixture.store()
        #expect(!FileManager.default.fileExists(atPath: gone))
        #expect(FileManager.default.fileExists(atPath: running))
        #expect(FileManager.default.fileExists(atPath: keysPath(fixture)))
    }

    /// A wrong recovery key counts as a wrong password: the next guess of any kind waits.
    @Test func wrongRecoveryKeysAreThrottledAsPasswordsAre() throws {
        let fixture = try StoreFixture()
        let clock = TimeSource.manual(at: 1_800_000_000_000)
        let (keychain, collection) = try Self.collection(fixture, clock: clock)
        let (recoveryKey, _) = try collection.addRecoveryKey(password: password("pw"))
        try keychain.lock(work)
        #expect(throws: CofferError.authenticationFailed) { try collection.unlock(recoveryKey: try RecoveryKey.generate()) }
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try collection.unlock(recoveryKey: recoveryKey) }
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try collection.unlock(password: password("pw")) }
        clock.advance(by: 1000)
        try collection.unlock(recoveryKey: recoveryKey)
        #expect(!collection.isLocked)
    }

    /// A collection written before key slots (format 1, its password's slot in its header)
    /// opens as it did; its first slot change moves its key to a keys file and rewrites it in
    /// format 2, after which the old password opens nothing.
    @Test func aFileFromBeforeKeySlotsOpensAndMovesToSlotsOnItsFirstChange() throws {
        let fixture = try StoreFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        try Data(base64Encoded: Self.legacyFile.joined())!.write(to: URL(fileURLWithPath: fixture.path("legacy")))
        let store = try fixture.store()
        let keychain = Keychain(provider: store)
        let collection = try store.fileCollection(legacy)
        #expect(try collection.withFreshState { $0.log.header.formatVersion } == 1)
        #expect(try collection.keySlots().map(\.kind) == [.password])
        try keychain.unlock(legacy, password: password("old password"))
        #expect(text(try keychain.search(Query(attributes: ["service": "mail"], returnSecret: true)).first?.secret) == "the secret")
        #expect(!FileManager.default.fileExists(atPath: keysPath(fixture, "legacy")))

        try collection.changePassword(from: password("old password"), to: password("new password"))
        #expect(FileManager.default.fileExists(atPath: keysPath(fixture, "legacy")))
        #expect(try collection.withFreshState { $0.log.header.formatVersion } == 2)
        try keychain.lock(legacy)
        #expect(throws: CofferError.authenticationFailed) { try keychain.unlock(legacy, password: password("old password")) }
        try unlockAfterTheWait(keychain, legacy, password("new password"))
        #expect(text(try keychain.search(Query(attributes: ["service": "mail"], returnSecret: true)).first?.secret) == "the secret")
    }

    /// `legacy.coffer` as Coffer 0.4.0 wrote it (before key slots; Argon2id t=1, m=64 KiB):
    /// password "old password", one item (service=mail, account=bob) whose secret is "the secret".
    static let legacyFile = [
        "Q09GRkVSAAEBAIeOKw12/ECPjBYMAeEzWTGSEgtrAAAAAAEBAAAAQAAAAAEAAAAgAAAAXl0VyHliigajxM/kHFyvoTc3Uul8",
        "1+5pmdiqlJmTXVYgAAAA/hUB2p17pxUBlzPzQMCOkCiVRiwKBS/INp2CBmjtoCPkxLIb8KVCaFYi2sEwAAAAjCdtR1BP50hI",
        "fpq/anS0uIKqdC5a8tXU+zRvNoq0SiPjHJD3WIdVKjwzAsHUd5c+8QSADmkAAACDAAAAAAAAAACSEgtrAAAAAAAAAAAAAAAA",
        "IgAAAAEAAAAAAAAAAQAAAAAAAAAGAAAAbGVnYWN5AQAAAAAAAADZ5lHYAJhkOgk5658WAAAAX+2FbjQeU95MaG5k0LUs+ShQ",
        "YE2UKLT/EHA9AQAAgQEAAAAAAAAAlRILawAAAAABAAAAAAAAADAAAAC/FwG4XcJccMIpdDULq9mmDKhAiTTzJnUeJ2wkAi9i",
        "lonuLYHoLNJ1LprITZspLrLFQSMKjV6RV34hyM7cAAAA86hYYwG2nHLbInldNyk9yfBPZFj1CTtAEj5+WviqBKyxWzteOdhp",
        "iZ3K11Rd+Ycy8I7KAyakqwe3iyCNm880dBtkWMY4kC647/z3XpcunXIG/p7VGEVyGWRKCQP0xcvmERx0l4pZgJj0gTY0XM98",
        "2NnJviIUX3G6+Unu5fnzK6P5ZvpbdUcVoHIqcSneLvM9v0kkH3vt9H6PQwKqwNt5jYf0zMaYUKu9OlFTb/8e7AROnMYbss/6",
        "3MfUpR5SsZgV9lClfHd9cL4LcvRhxYPvarzxx9k3o510ZCDOJYTfY+I="
    ]
}
