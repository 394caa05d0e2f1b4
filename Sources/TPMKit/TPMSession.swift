import CTSS2
import CofferCrypto
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a TPM through tpm2-tss's Enhanced System API, for one call of
/// `TPMDevice`; every handle it makes is flushed and the connection closed when the call ends.
///
/// Sealing: a keyed-hash object holding the secret, its authorization a policy — PolicyPCR over
/// the selected PCRs (when any), then PolicyAuthValue (the PIN's hash, or empty) — under the
/// owner hierarchy's ECC storage key. Commands that carry the secret (Create, Unseal) run in a
/// session salted with that key, so it crosses the bus to the TPM encrypted.
final class TPMSession {
    /// tpm2-tss's functions (`CTSS2`).
    private let tss: ctss2_functions
    private var context: OpaquePointer?
    private var tctiContext: OpaquePointer?
    /// Transient handles to flush before closing.
    private var handles: [ESYS_TR] = []

    private init(tcti: String) throws(TPMError) {
        Self.quietLibraryLogging()
        var failure: UnsafePointer<CChar>?
        guard let functions = ctss2_load(&failure) else { throw .unavailable(failure.map { String(cString: $0) } ?? "tpm2-tss cannot be loaded") }
        tss = functions.pointee
        var tctiHandle: OpaquePointer?
        var rc = tss.Tss2_TctiLdr_Initialize!(tcti, &tctiHandle)
        guard rc == TSS2_RC_SUCCESS, let tctiHandle else {
            let hint = tcti.hasPrefix("device:") ? "; a TPM device needs membership of the group that owns it, usually 'tss'" : ""
            throw .unavailable("\(tcti): \(text(rc))\(hint)")
        }
        tctiContext = tctiHandle
        var esys: OpaquePointer?
        rc = tss.Esys_Initialize!(&esys, tctiHandle, nil)
        guard rc == TSS2_RC_SUCCESS, let esys else {
            tss.Tss2_TctiLdr_Finalize!(&tctiContext)
            throw .unavailable("\(tcti): \(text(rc))")
        }
        context = esys
    }

    deinit {
        for handle in handles.reversed() { _ = tss.Esys_FlushContext!(context, handle) }
        tss.Esys_Finalize!(&context)
        tss.Tss2_TctiLdr_Finalize!(&tctiContext)
    }

    /// Runs `body` over a new connection to the TPM `tcti` names.
    static func open<R>(_ tcti: String, _ body: (TPMSession) throws(TPMError) -> R) throws(TPMError) -> R {
        let session = try TPMSession(tcti: tcti)
        return try body(session)
    }

    // MARK: Sealing

    func seal(_ secret: SecureBytes, pcrs: PCRSelection, pinAuth: SecureBytes?) throws(TPMError) -> TPMSealedObject {
        guard secret.count <= 128 else { throw .failed("a sealed secret holds at most 128 bytes") }
        let primary = try storageKey()
        let policy = try policyDigest(pcrs: pcrs)
        var inPublic = TPM2B_PUBLIC()
        inPublic.publicArea.type = TPM2_ALG_KEYEDHASH
        inPublic.publicArea.nameAlg = TPM2_ALG_SHA256
        // Bound to this TPM and this parent; usable only through its policy (no userWithAuth).
        // Without a PIN there is nothing to guess: the TPM's lockout (after others' wrong
        // PINs) does not stop this object.
        inPublic.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (pinAuth == nil ? TPMA_OBJECT_NODA : 0)
        inPublic.publicArea.authPolicy = policy
        inPublic.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { Self.wipe(&sensitive) }
        secret.withUnsafeBytes { Self.copy($0, into: &sensitive.sensitive.data.buffer, size: &sensitive.sensitive.data.size) }
        pinAuth?.withUnsafeBytes { Self.copy($0, into: &sensitive.sensitive.userAuth.buffer, size: &sensitive.sensitive.userAuth.size) }
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        let hmac = try saltedSession(type: TPM2_SE_HMAC, salt: primary,
                                     attributes: TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION)
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        defer { tss.Esys_Free!(outPrivate); tss.Esys_Free!(outPublic) }
        try check(tss.Esys_Create!(context, primary, hmac, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &inPublic, &outsideInfo,
                              &creationPCR, &outPrivate, &outPublic, nil, nil, nil), "create the sealed object")
        guard let outPrivate, let outPublic else { throw .failed("the TPM returned no sealed object") }
        return TPMSealedObject(publicArea: try marshal(outPublic.pointee), privateArea: try marshal(outPrivate.pointee))
    }

    func unseal(_ object: TPMSealedObject, pcrs: PCRSelection, pinAuth: SecureBytes?) throws(TPMError) -> SecureBytes {
        let primary = try storageKey()
        var inPublic = try unmarshalPublic(object.publicArea)
        var inPrivate = try unmarshalPrivate(object.privateArea)
        var loaded = ESYS_TR_NONE
        let rc = tss.Esys_Load!(context, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &inPrivate, &inPublic, &loaded)
        // A TPM with other seeds cannot check the private area's integrity: it is not this one's.
        guard rc == TSS2_RC_SUCCESS else { throw Self.isLoadRefusal(rc) ? .anotherTPM : error(rc, "load the sealed object") }
        handles.append(loaded)
        let policy = try saltedSession(type: TPM2_SE_POLICY, salt: primary,
                                       attributes: TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION)
        try applyPolicy(policy, pcrs: pcrs)
        var auth = TPM2B_AUTH()
        defer { Self.wipe(&auth) }
        pinAuth?.withUnsafeBytes { Self.copy($0, into: &auth.buffer, size: &auth.size) }
        try check(tss.Esys_TR_SetAuth!(context, loaded, &auth), "set the PIN")
        var outData: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        defer {
            if let outData { Self.wipe(&outData.pointee) }
            tss.Esys_Free!(outData)
        }
        try check(tss.Esys_Unseal!(context, loaded, policy, ESYS_TR_NONE, ESYS_TR_NONE, &outData), "unseal")
        guard let outData else { throw .failed("the TPM returned nothing") }
        do {
            let secret = try SecureBytes(count: Int(outData.pointee.size))
            secret.withUnsafeMutableBytes { target in
                withUnsafeBytes(of: &outData.pointee.buffer) { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(target.count))) }
            }
            return secret
        } catch {
            throw .failed("no secure memory for the unsealed secret: \(error)")
        }
    }

    func extendPCR(_ index: Int, with digest: [UInt8]) throws(TPMError) {
        guard (0...23).contains(index), digest.count == 32 else { throw .failed("PCR \(index) cannot be extended with \(digest.count) bytes") }
        var values = TPML_DIGEST_VALUES()
        values.count = 1
        values.digests.0.hashAlg = TPM2_ALG_SHA256
        withUnsafeMutableBytes(of: &values.digests.0.digest) { $0.copyBytes(from: digest) }
        try check(tss.Esys_PCR_Extend!(context, ESYS_TR(ESYS_TR_PCR0 + UInt32(index)), ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &values),
                  "extend PCR \(index)")
    }

    // MARK: Keys, sessions and policy

    /// The owner hierarchy's storage key (ECC P-256, AES-128-CFB, by the TCG's template), made
    /// from the owner seed: the same key each time on this TPM, another on any other.
    private func storageKey() throws(TPMError) -> ESYS_TR {
        var inPublic = TPM2B_PUBLIC()
        inPublic.publicArea.type = TPM2_ALG_ECC
        inPublic.publicArea.nameAlg = TPM2_ALG_SHA256
        inPublic.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
            | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT
        inPublic.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES
        inPublic.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        inPublic.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB
        inPublic.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL
        inPublic.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256
        inPublic.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL
        inPublic.publicArea.unique.ecc.x.size = 32
        inPublic.publicArea.unique.ecc.y.size = 32
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var handle = ESYS_TR_NONE
        let rc = tss.Esys_CreatePrimary!(context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &inPublic,
                                    &outsideInfo, &creationPCR, &handle, nil, nil, nil, nil)
        guard rc == TSS2_RC_SUCCESS else {
            if Self.baseCode(rc) == Code.badAuth || Self.baseCode(rc) == Code.authFail {
                throw .failed("the TPM's owner hierarchy has a password, which Coffer does not use; \(text(rc))")
            }
            throw error(rc, "make the storage key")
        }
        handles.append(handle)
        return handle
    }

    /// A session whose secrets are salted with `salt`'s key (so parameters can be encrypted).
    private func saltedSession(type: TPM2_SE, salt: ESYS_TR, attributes: TPMA_SESSION) throws(TPMError) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = TPM2_ALG_CFB
        var session = ESYS_TR_NONE
        try check(tss.Esys_StartAuthSession!(context, salt, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, nil, type,
                                        &symmetric, TPM2_ALG_SHA256, &session), "start a session")
        handles.append(session)
        try check(tss.Esys_TRSess_SetAttributes!(context, session, attributes, 0xff), "set the session's attributes")
        return session
    }

    /// The policy digest of `pcrs` at their current values, then the object's authorization value.
    private func policyDigest(pcrs: PCRSelection) throws(TPMError) -> TPM2B_DIGEST {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_NULL
        var trial = ESYS_TR_NONE
        try check(tss.Esys_StartAuthSession!(context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, nil,
                                        TPM2_SE_TRIAL, &symmetric, TPM2_ALG_SHA256, &trial), "start a trial session")
        handles.append(trial)
        try applyPolicy(trial, pcrs: pcrs)
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        defer { tss.Esys_Free!(digest) }
        try check(tss.Esys_PolicyGetDigest!(context, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest), "read the policy")
        guard let digest else { throw .failed("the TPM returned no policy digest") }
        return digest.pointee
    }

    /// PolicyPCR over `pcrs` (their current values), then PolicyAuthValue.
    private func applyPolicy(_ session: ESYS_TR, pcrs: PCRSelection) throws(TPMError) {
        if !pcrs.isEmpty {
            var selection = TPML_PCR_SELECTION()
            selection.count = 1
            selection.pcrSelections.0.hash = TPM2_ALG_SHA256
            selection.pcrSelections.0.sizeofSelect = 3
            selection.pcrSelections.0.pcrSelect.0 = UInt8(truncatingIfNeeded: pcrs.mask)
            selection.pcrSelections.0.pcrSelect.1 = UInt8(truncatingIfNeeded: pcrs.mask >> 8)
            selection.pcrSelections.0.pcrSelect.2 = UInt8(truncatingIfNeeded: pcrs.mask >> 16)
            var empty = TPM2B_DIGEST()
            try check(tss.Esys_PolicyPCR!(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &selection), "bind to the PCRs")
        }
        try check(tss.Esys_PolicyAuthValue!(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE), "require the PIN")
    }

    // MARK: Response codes

    /// The TPM's response codes used here (the header spells them as sums Swift cannot import).
    private enum Code {
        static let value: TSS2_RC = 0x084, authFail: TSS2_RC = 0x08E, size: TSS2_RC = 0x095, key: TSS2_RC = 0x09C
        static let policyFail: TSS2_RC = 0x09D, integrity: TSS2_RC = 0x09F, badAuth: TSS2_RC = 0x0A2, binding: TSS2_RC = 0x0A5
        static let pcrChanged: TSS2_RC = 0x128, lockout: TSS2_RC = 0x921
    }

    private func check(_ rc: TSS2_RC, _ what: String) throws(TPMError) {
        guard rc == TSS2_RC_SUCCESS else { throw error(rc, what) }
    }

    /// The TPM's own response code without its handle, session or parameter number; other
    /// layers' codes as they are.
    private static func baseCode(_ rc: TSS2_RC) -> TSS2_RC {
        guard rc & 0xFFFF_0000 == 0 else { return rc }
        return rc & 0x80 != 0 ? rc & 0xBF : rc & 0xFFF
    }

    private func error(_ rc: TSS2_RC, _ what: String) -> TPMError {
        switch Self.baseCode(rc) {
        case Code.authFail, Code.badAuth: .wrongPIN
        case Code.policyFail, Code.pcrChanged: .pcrsChanged
        case Code.lockout: .lockedOut
        default: .failed("cannot \(what): \(text(rc))")
        }
    }

    /// Load fails this way when the private area was not made under this TPM's storage key.
    private static func isLoadRefusal(_ rc: TSS2_RC) -> Bool {
        [Code.integrity, Code.binding, Code.size, Code.key, Code.value].contains(baseCode(rc))
    }

    private func text(_ rc: TSS2_RC) -> String {
        tss.Tss2_RC_Decode!(rc).map { String(cString: $0) } ?? String(rc, radix: 16)
    }

    /// tpm2-tss writes every refused command to stderr (a wrong PIN among them); what matters
    /// reaches the user as a `TPMError` instead. `TSS2_LOG`, when set, is left as it is.
    private static func quietLibraryLogging() {
        setenv("TSS2_LOG", "all+NONE", 0)
    }

    // MARK: Bytes

    private static func copy<Buffer>(_ bytes: UnsafeRawBufferPointer, into buffer: inout Buffer, size: inout UInt16) {
        withUnsafeMutableBytes(of: &buffer) { target in
            let count = min(bytes.count, target.count)
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(count)))
            size = UInt16(count)
        }
    }

    private static func wipe<Value>(_ value: inout Value) {
        withUnsafeMutableBytes(of: &value) { CofferCrypto.wipe($0.baseAddress, $0.count) }
    }

    private func marshal(_ value: TPM2B_PUBLIC) throws(TPMError) -> [UInt8] {
        var value = value
        return try marshalled(MemoryLayout<TPM2B_PUBLIC>.size) { tss.Tss2_MU_TPM2B_PUBLIC_Marshal!(&value, $0, $1, $2) }
    }

    private func marshal(_ value: TPM2B_PRIVATE) throws(TPMError) -> [UInt8] {
        var value = value
        return try marshalled(MemoryLayout<TPM2B_PRIVATE>.size) { tss.Tss2_MU_TPM2B_PRIVATE_Marshal!(&value, $0, $1, $2) }
    }

    private func marshalled(_ capacity: Int,
                                   _ body: (UnsafeMutablePointer<UInt8>, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) throws(TPMError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: capacity)
        var offset = 0
        let rc = bytes.withUnsafeMutableBufferPointer { body($0.baseAddress!, capacity, &offset) }
        guard rc == TSS2_RC_SUCCESS else { throw .failed("cannot marshal: \(text(rc))") }
        return Array(bytes[..<offset])
    }

    private func unmarshalPublic(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PUBLIC {
        var value = TPM2B_PUBLIC()
        var offset = 0
        let rc = tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal!(bytes, bytes.count, &offset, &value)
        guard rc == TSS2_RC_SUCCESS, offset == bytes.count else { throw .anotherTPM }
        return value
    }

    private func unmarshalPrivate(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PRIVATE {
        var value = TPM2B_PRIVATE()
        var offset = 0
        let rc = tss.Tss2_MU_TPM2B_PRIVATE_Unmarshal!(bytes, bytes.count, &offset, &value)
        guard rc == TSS2_RC_SUCCESS, offset == bytes.count else { throw .anotherTPM }
        return value
    }
}
