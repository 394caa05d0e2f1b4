/// Why the TPM did not seal or unseal, in words a user can act on.
public enum TPMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No TPM could be reached (no device, no permission, the simulator not running).
    case unavailable(String)
    /// The PIN was wrong (the TPM counts it towards its own lockout as well).
    case wrongPIN
    /// The PCRs the object is bound to hold other values than when it was sealed: the machine
    /// booted something else (firmware, boot loader, Secure Boot settings), or was changed.
    case pcrsChanged
    /// The object was sealed by another TPM, this TPM was cleared since, or it was changed.
    case anotherTPM
    /// The TPM refuses authorizations for a while after too many wrong ones.
    case lockedOut
    /// Anything else the TPM or the software stack reported.
    case failed(String)

    public var description: String {
        switch self {
        case .unavailable(let why): "no TPM could be reached (\(why))"
        case .wrongPIN: "the TPM PIN is wrong"
        case .pcrsChanged: "the TPM refuses: this machine's boot state (its PCRs) changed since the slot was made"
        case .anotherTPM: "the TPM cannot load the slot's sealed object: it was made with another TPM, this TPM was cleared since, or the slot is damaged"
        case .lockedOut: "the TPM is in lockout after too many wrong PINs; it lets one more try through as time passes"
        case .failed(let what): "the TPM failed: \(what)"
        }
    }
}
