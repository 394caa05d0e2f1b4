import CofferCore
import CofferCrypto
@testable import CofferStore
import Testing

/// A collection that locked by itself may keep its key aside for the fingerprint's re-unlock:
/// locked for every read, back only through `unlockWithKeptKey`, and gone after an explicit
/// lock, a password change or one use.
struct KeptKeyTests {
    @Test func keptThroughAnAutoLockOnlyAndUsedOnce() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let reference = try keychain.add(NewItem(label: "a", attributes: ["k": "v"], secret: secret("s")), to: work)

        try keychain.lock(work, keepingKey: true)
        #expect(try keychain.info(work).isLocked)
        #expect(keychain.hasKeptKey(work))
        #expect(throws: CofferError.locked("work")) { _ = try keychain.secret(of: reference) }
        #expect(try keychain.unlockWithKeptKey(work))
        #expect(try keychain.secret(of: reference).bytes == (try SecureBytes(Array("s".utf8))))
        #expect(!keychain.hasKeptKey(work))
        try keychain.lock(work, keepingKey: true)
        #expect(keychain.hasKeptKey(work))

        // An explicit lock wipes it: only the password opens again.
        try keychain.lock(work)
        #expect(!keychain.hasKeptKey(work))
        #expect(try !keychain.unlockWithKeptKey(work))
        #expect(try keychain.info(work).isLocked)

        // So does a password change.
        try keychain.unlock(work, password: password("pw"))
        try keychain.lock(work, keepingKey: true)
        try keychain.changePassword(work, from: password("pw"), to: password("new"))
        #expect(!keychain.hasKeptKey(work))
        // Another process opening the same files never has one.
        #expect(try !fixture.keychain().hasKeptKey(work))
    }
}
