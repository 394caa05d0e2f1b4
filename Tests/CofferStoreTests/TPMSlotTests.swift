import CofferCore
import CofferCrypto
@testable import CofferStore
import CofferTestSupport
import Foundation
import SystemKit
import Testing
import TPMKit

/// A key slot this machine's TPM seals (a real swtpm started by each test): it opens the
/// collection on this machine only, with its PIN when it has one, while its PCRs hold.
@Suite(.timeLimit(.minutes(3))) struct TPMSlotTests {
    @Test func aTPMSlotOpensTheCollectionOnThisMachineOnly() throws {
        let fixture = try StoreFixture()
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let (keychain, collection) = try KeySlotTests.collection(fixture)
        let slot = try collection.addTPMSlot(device, pin: nil, pcrs: .none, password: password("pw"))
        #expect(slot.kind == .tpm && slot.tpm?.hasPIN == false)
        #expect(try collection.keySlots().map(\.kind) == [.password, .tpm])
        collection.lock()
        try collection.unlock(tpm: device, pin: nil)
        #expect(!collection.isLocked)   // with the key its records verify under

        // The same files on another machine: its TPM cannot open the slot. That is no guess.
        collection.lock()
        let other = try SoftwareTPM()
        #expect { try collection.unlock(tpm: TPMDevice(tcti: other.tcti), pin: nil) } throws: {
            "\($0)".contains("another TPM")
        }
        #expect(collection.secondsBeforeNextUnlock == 0)
        #expect(collection.isLocked)
        // A collection without a TPM slot says so.
        try keychain.createCollection(label: "Other", id: CollectionID("other")!, password: password("o"))
        #expect { try fixture.store().fileCollection(CollectionID("other")!).unlock(tpm: device, pin: nil) } throws: {
            "\($0)".contains("no TPM slot")
        }
    }

    @Test func aTPMPINIsThrottledAsPasswordsAre() throws {
        let fixture = try StoreFixture()
        let clock = TimeSource.manual(at: 1_800_000_000_000)
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let (keychain, collection) = try KeySlotTests.collection(fixture, clock: clock)
        _ = try collection.addTPMSlot(device, pin: password("246813"), pcrs: .none, password: password("pw"))
        collection.lock()
        // No PIN at all is not a guess: the slot needs one.
        #expect { try collection.unlock(tpm: device, pin: nil) } throws: { "\($0)".contains("needs its PIN") }
        #expect(collection.secondsBeforeNextUnlock == 0)
        #expect(throws: CofferError.authenticationFailed) { try collection.unlock(tpm: device, pin: password("135724")) }
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try collection.unlock(tpm: device, pin: password("246813")) }
        #expect(throws: CofferError.throttled("work", seconds: 1)) { try collection.unlock(password: password("pw")) }
        clock.advance(by: 1000)
        try collection.unlock(tpm: device, pin: password("246813"))
        #expect(!collection.isLocked)

        // What the TPM holds is bound to the PIN through Argon2id, not to the PIN itself: a
        // program that unseals the object directly, past the throttle, pays Argon2id per guess.
        let slot = try #require(try collection.keySlots().first { $0.kind == .tpm })
        let object = try #require(slot.tpm?.object)
        #expect(throws: TPMError.wrongPIN) { try device.unseal(object, pcrs: .none, pin: password("246813")) }
        #expect(slot.kdf != nil)
        // A PIN shorter than 6 characters is refused.
        #expect { try collection.addTPMSlot(device, pin: password("12345"), pcrs: .none, password: password("pw")) } throws: {
            "\($0)".contains("at least 6")
        }
    }

    @Test func aPCRBoundSlotRefusesOnceThePCRChanges() throws {
        let fixture = try StoreFixture()
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let (keychain, collection) = try KeySlotTests.collection(fixture)
        let pcrs = try #require(PCRSelection([16]))
        let slot = try collection.addTPMSlot(device, pin: nil, pcrs: pcrs, password: password("pw"))
        #expect(slot.tpm?.pcrs == pcrs)
        collection.lock()
        try collection.unlock(tpm: device, pin: nil)
        collection.lock()
        try device.extendPCR(16, with: Array(repeating: 1, count: 32))
        #expect { try collection.unlock(tpm: device, pin: nil) } throws: { "\($0)".contains("PCRs") }
        #expect(collection.secondsBeforeNextUnlock == 0)
        #expect(collection.isLocked)
        // The password still opens it.
        try collection.unlock(password: password("pw"))
    }

    /// A TPM slot changed in the file, or taken from another collection, is damage.
    @Test func aChangedOrSwappedTPMSlotIsDamage() throws {
        let fixture = try StoreFixture()
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let (keychain, collection) = try KeySlotTests.collection(fixture)
        _ = try collection.addTPMSlot(device, pin: nil, pcrs: .none, password: password("pw"))
        collection.lock()
        let path = "\(fixture.directory)/work.keys"
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))

        // The slot's salt (it is the last slot; its nonce, sealed key and the file's MAC follow).
        var changed = original
        changed[changed.count - 32 - 48 - 4 - 12 - 5] ^= 1
        try Data(changed).write(to: URL(fileURLWithPath: path))
        #expect { try collection.unlock(tpm: device, pin: nil) } throws: { reportsDamage(to: "work.keys", $0) }

        // The TPM slot of another collection sealed by the same TPM, put in this file's place.
        let other = CollectionID("other")!
        try keychain.createCollection(label: "Other", id: other, password: password("o"))
        _ = try fixture.store().fileCollection(other).addTPMSlot(device, pin: nil, pcrs: .none, password: password("o"))
        let theirs = Array(try Data(contentsOf: URL(fileURLWithPath: "\(fixture.directory)/other.keys")))
        let theirSlot = try #require(try KeySlotsFile.decode(theirs, file: "other.keys").slots.last)
        let ours = try KeySlotsFile.decode(original, file: "work.keys")
        var w = ByteWriter(capacity: 1024)
        w.raw(Array(original[..<26]))
        w.u8(2)
        ours.slots[0].encode(into: &w)
        theirSlot.encode(into: &w)
        w.raw(Array(original.suffix(32)))
        try Data(w.bytes).write(to: URL(fileURLWithPath: path))
        #expect { try collection.unlock(tpm: device, pin: nil) } throws: { reportsDamage(to: "work.keys", $0) }
        #expect(collection.isLocked)
        #expect(collection.secondsBeforeNextUnlock == 0)

        try Data(original).write(to: URL(fileURLWithPath: path))
        try collection.unlock(tpm: device, pin: nil)
    }
}
