import CofferCrypto

/// A TPM 2.0, named by a tpm2-tss TCTI configuration: `device:/dev/tpmrm0` (the kernel's
/// resource manager, the default) or, in tests, `swtpm:host=127.0.0.1,port=N`.
///
/// Each call opens its own connection and closes it: a sealed secret lives in the TPM only
/// for the call. Objects are sealed under the owner hierarchy's storage key, made anew from
/// the TPM's owner seed each time (an ECC P-256 key by the TCG's template), so nothing is
/// left in the TPM between calls.
public struct TPMDevice: Sendable, Equatable {
    /// The TCTI configuration tpm2-tss is given.
    public let tcti: String

    /// The variable that names another TPM than /dev/tpmrm0.
    public static let environmentVariable = "COFFER_TPM_TCTI"

    public init(tcti: String) { self.tcti = tcti }

    /// The TPM `environment` names in `COFFER_TPM_TCTI`, else the kernel's resource manager.
    public static func configured(_ environment: [String: String]) -> TPMDevice {
        TPMDevice(tcti: environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "device:/dev/tpmrm0")
    }

    /// Seals `secret` (at most 128 bytes) so that only this TPM unseals it, while `pcrs` hold
    /// their current values and, if `pin` is given, with that PIN.
    public func seal(_ secret: SecureBytes, pcrs: PCRSelection, pin: SecureBytes?) throws(TPMError) -> TPMSealedObject {
        try TPMSession.open(tcti) { session throws(TPMError) in
            try session.seal(secret, pcrs: pcrs, pinAuth: try Self.authValue(pin))
        }
    }

    /// The secret `object` holds, if this TPM sealed it and its PCRs and PIN agree.
    public func unseal(_ object: TPMSealedObject, pcrs: PCRSelection, pin: SecureBytes?) throws(TPMError) -> SecureBytes {
        try TPMSession.open(tcti) { session throws(TPMError) in
            try session.unseal(object, pcrs: pcrs, pinAuth: try Self.authValue(pin))
        }
    }

    /// Extends SHA-256 PCR `index` with `digest` (32 bytes): what a boot step does. For tests
    /// of PCR binding (PCR 16, the debug PCR, resettable, is the one to use).
    public func extendPCR(_ index: Int, with digest: [UInt8]) throws(TPMError) {
        try TPMSession.open(tcti) { session throws(TPMError) in try session.extendPCR(index, with: digest) }
    }

    /// The object's authorization value for `pin`: its SHA-256, so that a PIN of any length
    /// fits the TPM's limit; empty without one.
    private static func authValue(_ pin: SecureBytes?) throws(TPMError) -> SecureBytes? {
        guard let pin else { return nil }
        do { return try SecureDigest.hash(.sha256, pin) } catch { throw .failed("cannot hash the PIN: \(error)") }
    }
}
