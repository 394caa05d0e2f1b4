import CofferCrypto
import CofferTestSupport
import Testing
import TPMKit

/// Sealing and unsealing with a real software TPM (swtpm) started by the test.
@Suite(.timeLimit(.minutes(2))) struct TPMSealingTests {
    func secret(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    func text(_ bytes: SecureBytes) -> String { bytes.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } }

    @Test func aSecretSealedByATPMUnsealsThereAndOnlyThere() throws {
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let object = try device.seal(try secret("thirty-two bytes of key material"), pcrs: .none, pin: nil)
        #expect(!object.privateArea.isEmpty)
        #expect(text(try device.unseal(object, pcrs: .none, pin: nil)) == "thirty-two bytes of key material")
        // After a reboot, still.
        try tpm.restart()
        #expect(text(try TPMDevice(tcti: tpm.tcti).unseal(object, pcrs: .none, pin: nil)) == "thirty-two bytes of key material")
        // Another machine's TPM (new seeds) cannot load it.
        let other = try SoftwareTPM()
        #expect(throws: TPMError.anotherTPM) { try TPMDevice(tcti: other.tcti).unseal(object, pcrs: .none, pin: nil) }
    }

    @Test func aPINIsNeededWhenOneWasSet() throws {
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let object = try device.seal(try secret("key"), pcrs: .none, pin: try secret("1234"))
        #expect(throws: TPMError.wrongPIN) { try device.unseal(object, pcrs: .none, pin: try secret("1235")) }
        #expect(throws: TPMError.wrongPIN) { try device.unseal(object, pcrs: .none, pin: nil) }
        #expect(text(try device.unseal(object, pcrs: .none, pin: try secret("1234"))) == "key")
    }

    /// Wrong PINs put the TPM in lockout; an object sealed without a PIN has nothing to guess
    /// and still unseals (else any program could lock a login without a password out).
    @Test func anObjectWithoutAPINStillUnsealsWhileTheTPMIsInLockout() throws {
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let guarded = try device.seal(try secret("guarded"), pcrs: .none, pin: try secret("right PIN"))
        let free = try device.seal(try secret("free"), pcrs: .none, pin: nil)
        var outcomes: [TPMError] = []
        for _ in 0..<10 {
            let wrong = try secret("wrong PIN")
            do { _ = try device.unseal(guarded, pcrs: .none, pin: wrong) } catch { outcomes.append(error) }
        }
        #expect(outcomes.contains(.lockedOut), "\(outcomes)")
        #expect(throws: TPMError.lockedOut) { try device.unseal(guarded, pcrs: .none, pin: try secret("right PIN")) }
        #expect(text(try device.unseal(free, pcrs: .none, pin: nil)) == "free")
    }

    @Test func aPCRBoundSecretUnsealsOnlyWhileThePCRsHoldTheirValues() throws {
        let tpm = try SoftwareTPM()
        let device = TPMDevice(tcti: tpm.tcti)
        let pcrs = try #require(PCRSelection([16]))
        let object = try device.seal(try secret("key"), pcrs: pcrs, pin: nil)
        #expect(text(try device.unseal(object, pcrs: pcrs, pin: nil)) == "key")
        // An unbound secret does not care.
        let unbound = try device.seal(try secret("free"), pcrs: .none, pin: nil)
        try device.extendPCR(16, with: Array(repeating: 7, count: 32))
        #expect(throws: TPMError.pcrsChanged) { try device.unseal(object, pcrs: pcrs, pin: nil) }
        #expect(text(try device.unseal(unbound, pcrs: .none, pin: nil)) == "free")
        // A reboot starts the PCRs again from where they were at sealing.
        try tpm.restart()
        #expect(text(try TPMDevice(tcti: tpm.tcti).unseal(object, pcrs: pcrs, pin: nil)) == "key")
    }

    @Test func noTPMIsSaidSo() {
        #expect { try TPMDevice(tcti: "device:/nonexistent/tpmrm0").seal(try secret("key"), pcrs: .none, pin: nil) } throws: {
            guard case TPMError.unavailable(let why) = $0 else { return false }
            return why.contains("/nonexistent/tpmrm0")
        }
    }

    /// tpm2-tss (and the OpenSSL it needs) is loaded when a TPM is first used: the daemon and
    /// the CLI do not link it, so a cofferd that never uses a TPM maps none of it.
    @Test func theProgramsLoadTpm2TssOnlyWhenATPMIsUsed() throws {
        for program in ["cofferd", "coffer"] {
            let path = try #require(Executables.built(program))
            let dynamic = try ChildProcess("readelf", arguments: ["-d", path], environment: ["PATH": "/usr/bin:/bin"]).wait(timeout: 30)
            #expect(dynamic.succeeded && dynamic.stdout.contains("libdbus-1"), "\(dynamic)")
            #expect(!dynamic.stdout.contains("libtss2") && !dynamic.stdout.contains("libcrypto"), "\(program) links tpm2-tss")
        }
    }
}
