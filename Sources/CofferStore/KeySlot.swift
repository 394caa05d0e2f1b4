import CofferCore
import CofferCrypto
import TPMKit

/// One way into a collection, as a LUKS key slot is: a key derived from something its owner
/// holds seals the collection's data key, and opens it alone.
///
/// ```
/// u8  kind (1 password, 2 recovery key, 3 TPM)
/// u32 slot id (one above the highest id in the file when it was added)
/// u64 created (seconds)
/// password only: u32 t, u32 m (KiB), u32 p (Argon2id)
/// TPM only: u32 PCR mask, u8 1 with a PIN else 0, with a PIN its Argon2id parameters (as a
///     password's), u32+bytes public area, u32+bytes private area
/// u32+bytes salt (32)
/// 12  nonce, u32+bytes sealed data key (32 + 16 tag)
/// ```
/// The data key is sealed with AES-256-GCM; its associated data is the slot file's start (so
/// the collection's uuid) and every byte of the slot before the nonce, so a slot moved to
/// another collection, or with a parameter changed, opens nothing.
package struct KeySlot: Sendable, Equatable {
    /// What opens a slot.
    package enum Kind: UInt8, Sendable, CaseIterable {
        /// The collection's password, through Argon2id (one such slot).
        case password = 1
        /// A `RecoveryKey`, through HKDF: it has 128 random bits, so no slow derivation is needed.
        case recoveryKey = 2
        /// This machine's TPM: it unseals a random secret (see `TPMBinding`), through HKDF.
        case tpm = 3

        /// What the kind is called in messages and listings.
        package var described: String {
            switch self {
            case .password: "password"
            case .recoveryKey: "recovery key"
            case .tpm: "TPM"
            }
        }
    }

    /// What a TPM slot holds besides the common fields: the TPM's sealed object (a random
    /// secret the slot's key is derived from) and what it was sealed to.
    package struct TPMBinding: Sendable, Equatable {
        package let pcrs: PCRSelection
        package let hasPIN: Bool
        let object: TPMSealedObject
    }

    /// What someone offers to open a slot.
    package enum Opener {
        case password(SecureBytes)
        case recoveryKey(RecoveryKey)
        /// The TPM to unseal with, and the PIN if the slot has one. When adding a slot, `pcrs`
        /// are those to bind it to (ignored when opening: the slot says which).
        case tpm(TPMDevice, pin: SecureBytes?, pcrs: PCRSelection)

        var kind: Kind {
            switch self {
            case .password: .password
            case .recoveryKey: .recoveryKey
            case .tpm: .tpm
            }
        }
    }

    package let id: UInt32
    package let kind: Kind
    package let created: UInt64
    /// The Argon2id parameters of a password slot, or of a TPM slot's PIN; nil otherwise.
    package let kdf: Argon2Parameters?
    /// The TPM's part of a TPM slot; nil for other kinds.
    package let tpm: TPMBinding?
    let salt: [UInt8]
    let nonce: [UInt8]
    let sealedKey: [UInt8]

    /// A new slot `id` sealing `dataKey` for `opener`; `context` is the slot file's start.
    static func seal(_ dataKey: SecureBytes, id: UInt32, opener: Opener, kdf: Argon2Parameters,
                     context: [UInt8]) throws(CofferError) -> KeySlot {
        let salt = Random.bytes(32)
        var tpmSecret: SecureBytes?
        var tpm: TPMBinding?
        var slotKDF: Argon2Parameters? = opener.kind == .password ? kdf : nil
        if case .tpm(let device, let pin, let pcrs) = opener {
            // A random secret only the TPM gives back; the slot's key is derived from it.
            let secret = try CofferError.catching { try Random.secureBytes(32) }
            let pinKDF = Argon2Parameters(iterations: 1, memoryKiB: kdf.memoryKiB, parallelism: kdf.parallelism)
            let pinAuth = try pin.map { pin throws(CofferError) in try Self.pinAuthorization(pin, salt: salt, kdf: pinKDF) }
            tpm = TPMBinding(pcrs: pcrs, hasPIN: pin != nil, object: try Self.tpmCall { () throws(TPMError) in
                try device.seal(secret, pcrs: pcrs, pin: pinAuth)
            })
            if pin != nil { slotKDF = pinKDF }
            tpmSecret = secret
        }
        let unsealed = KeySlot(id: id, kind: opener.kind, created: Clock.now(), kdf: slotKDF, tpm: tpm,
                               salt: salt, nonce: Random.nonce(AESGCM.nonceLength), sealedKey: [])
        let keyEncryptionKey = try unsealed.keyEncryptionKey(opener, tpmSecret: tpmSecret)
        let sealed = try CofferError.catching {
            try AESGCM.seal(dataKey, key: keyEncryptionKey, nonce: unsealed.nonce, aad: context + unsealed.descriptor)
        }
        return KeySlot(id: id, kind: unsealed.kind, created: unsealed.created, kdf: unsealed.kdf, tpm: tpm, salt: unsealed.salt,
                       nonce: unsealed.nonce, sealedKey: sealed)
    }

    /// The data key, or `authenticationFailed` if `opener` does not open this slot (a wrong
    /// password, recovery key or TPM PIN). A TPM that refuses for another reason (another
    /// machine's, changed PCRs, none reachable) is an error of its own, not a wrong guess.
    func open(with opener: Opener, context: [UInt8]) throws(CofferError) -> SecureBytes {
        guard opener.kind == kind else { throw .authenticationFailed }
        let keyEncryptionKey = try keyEncryptionKey(opener, tpmSecret: nil)
        do throws(CofferError) {
            return try CofferError.catching { try AESGCM.open(sealedKey[...], key: keyEncryptionKey, nonce: nonce, aad: context + descriptor) }
        } catch .authenticationFailed where kind == .tpm {
            // The TPM gave its secret (the PIN was right), so only a changed slot fails here.
            throw .storeCorrupt(file: "", reason: "key slot \(id) (TPM) was changed or comes from another collection")
        }
    }

    /// The key that seals the data key in this slot; `tpmSecret` is a TPM slot's secret when
    /// it is known already (at sealing), else the TPM unseals it.
    private func keyEncryptionKey(_ opener: Opener, tpmSecret: SecureBytes?) throws(CofferError) -> SecureBytes {
        switch opener {
        case .password(let password):
            return try Self.passwordKey(password, salt: salt, kdf: kdf ?? .default)
        case .recoveryKey(let key):
            return try CofferError.catching {
                try HKDF.sha256(inputKeyMaterial: key.bytes, salt: salt, info: Array("coffer recovery key slot".utf8),
                                outputLength: AESGCM.keyLength)
            }
        case .tpm(let device, let pin, _):
            guard let tpm else { throw .authenticationFailed }
            if tpm.hasPIN, pin == nil { throw .invalidArgument("key slot \(id) (TPM) needs its PIN (coffer unlock --tpm --pin)") }
            let secret: SecureBytes
            if let tpmSecret {
                secret = tpmSecret
            } else {
                let pinAuth = try tpm.hasPIN ? pin.map { pin throws(CofferError) in
                    try Self.pinAuthorization(pin, salt: salt, kdf: kdf ?? .default)
                } : nil
                secret = try Self.tpmCall { () throws(TPMError) in try device.unseal(tpm.object, pcrs: tpm.pcrs, pin: pinAuth) }
            }
            return try CofferError.catching {
                try HKDF.sha256(inputKeyMaterial: secret, salt: salt, info: Array("coffer tpm slot".utf8), outputLength: AESGCM.keyLength)
            }
        }
    }

    /// Runs a TPM call; a wrong PIN is a wrong guess, anything else the TPM says an error.
    private static func tpmCall<R>(_ body: () throws(TPMError) -> R) throws(CofferError) -> R {
        do {
            return try body()
        } catch .wrongPIN {
            throw .authenticationFailed
        } catch {
            throw .keySlotRefused("\(error)")
        }
    }

    /// What a TPM slot's PIN becomes before the TPM sees it: Argon2id (one pass, the memory of
    /// the password's), so that each guess costs that much even where the TPM's own lockout
    /// can be reset (a TPM whose lockout has no password lets its owner's programs do that).
    static func pinAuthorization(_ pin: SecureBytes, salt: [UInt8], kdf: Argon2Parameters) throws(CofferError) -> SecureBytes {
        try stretched(pin, domain: 0x02, salt: salt, kdf: kdf)
    }

    /// Argon2id over the password behind a fixed leading byte, so that an empty password
    /// (which libgcrypt's Argon2 refuses, and which gnome-keyring users rely on) works too.
    static func passwordKey(_ password: SecureBytes, salt: [UInt8], kdf: Argon2Parameters) throws(CofferError) -> SecureBytes {
        try stretched(password, domain: 0x01, salt: salt, kdf: kdf)
    }

    /// Argon2id over `text` behind the byte `domain` (which keeps a password's key and a PIN's
    /// apart), 32 bytes.
    private static func stretched(_ text: SecureBytes, domain: UInt8, salt: [UInt8], kdf: Argon2Parameters) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let input = try SecureBytes(capacity: text.count + 1)
            try input.append(domain)
            try input.append(text)
            return try KDF.argon2id(password: input, salt: salt, parameters: kdf, outputLength: AESGCM.keyLength)
        }
    }

    /// Every byte of the slot before its nonce.
    private var descriptor: [UInt8] {
        var w = ByteWriter(capacity: 80)
        w.u8(kind.rawValue)
        w.u32(id)
        w.u64(created)
        if let kdf, kind == .password { Self.encode(kdf, into: &w) }
        if let tpm {
            w.u32(tpm.pcrs.mask)
            w.u8(tpm.hasPIN ? 1 : 0)
            if let kdf, tpm.hasPIN { Self.encode(kdf, into: &w) }
            w.field(tpm.object.publicArea)
            w.field(tpm.object.privateArea)
        }
        w.field(salt)
        return w.bytes
    }

    private static func encode(_ kdf: Argon2Parameters, into w: inout ByteWriter) {
        w.u32(kdf.iterations)
        w.u32(kdf.memoryKiB)
        w.u32(kdf.parallelism)
    }

    private static func decodeKDF(_ r: inout ByteReader) throws -> Argon2Parameters {
        let parameters = Argon2Parameters(iterations: try r.u32(), memoryKiB: try r.u32(), parallelism: try r.u32())
        guard parameters.isAcceptableFromFile else {
            throw KeySlotsFile.Malformed(why: "key derivation parameters out of range (t=\(parameters.iterations), m=\(parameters.memoryKiB) KiB, p=\(parameters.parallelism))")
        }
        return parameters
    }

    func encode(into w: inout ByteWriter) {
        w.raw(descriptor)
        w.raw(nonce)
        w.field(sealedKey)
    }

    /// Reads a slot; `why` describes what is wrong with one that cannot be.
    static func decode(_ r: inout ByteReader) throws(KeySlotsFile.Malformed) -> KeySlot {
        do {
            guard let kind = Kind(rawValue: try r.u8()) else { throw KeySlotsFile.Malformed(why: "a key slot of an unknown kind") }
            let id = try r.u32()
            let created = try r.u64()
            var kdf: Argon2Parameters?
            if kind == .password { kdf = try decodeKDF(&r) }
            var tpm: TPMBinding?
            if kind == .tpm {
                guard let pcrs = PCRSelection(mask: try r.u32()) else { throw KeySlotsFile.Malformed(why: "a TPM slot names PCRs above 23") }
                let pin = try r.u8()
                guard pin <= 1 else { throw KeySlotsFile.Malformed(why: "a TPM slot's PIN flag is \(pin)") }
                if pin == 1 { kdf = try decodeKDF(&r) }
                let publicArea = Array(r.bytes[try r.fieldRange()])
                let privateArea = Array(r.bytes[try r.fieldRange()])
                guard (1...1024).contains(publicArea.count), (1...1024).contains(privateArea.count) else {
                    throw KeySlotsFile.Malformed(why: "a TPM slot's sealed object has a wrong size")
                }
                tpm = TPMBinding(pcrs: pcrs, hasPIN: pin == 1, object: TPMSealedObject(publicArea: publicArea, privateArea: privateArea))
            }
            let salt = Array(r.bytes[try r.fieldRange()])
            let nonce = Array(try r.raw(AESGCM.nonceLength))
            let sealed = Array(r.bytes[try r.fieldRange()])
            guard salt.count >= 16, salt.count <= 64, sealed.count == AESGCM.keyLength + AESGCM.tagLength else {
                throw KeySlotsFile.Malformed(why: "a key slot's fields have wrong sizes")
            }
            return KeySlot(id: id, kind: kind, created: created, kdf: kdf, tpm: tpm, salt: salt, nonce: nonce, sealedKey: sealed)
        } catch is ByteReader.Truncated {
            throw KeySlotsFile.Malformed(why: "it is truncated")
        } catch let error as KeySlotsFile.Malformed {
            throw error
        } catch {
            throw KeySlotsFile.Malformed(why: "\(error)")
        }
    }
}
