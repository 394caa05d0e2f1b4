import CofferCore
import CofferCrypto

/// One way into a collection, as a LUKS key slot is: a key derived from something its owner
/// holds seals the collection's data key, and opens it alone.
///
/// ```
/// u8  kind (1 password, 2 recovery key)
/// u32 slot id (one above the highest id in the file when it was added)
/// u64 created (seconds)
/// password only: u32 t, u32 m (KiB), u32 p (Argon2id)
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

        /// What the kind is called in messages and listings.
        package var described: String {
            switch self {
            case .password: "password"
            case .recoveryKey: "recovery key"
            }
        }
    }

    /// What someone offers to open a slot.
    package enum Opener {
        case password(SecureBytes)
        case recoveryKey(RecoveryKey)

        var kind: Kind {
            switch self {
            case .password: .password
            case .recoveryKey: .recoveryKey
            }
        }
    }

    package let id: UInt32
    package let kind: Kind
    package let created: UInt64
    /// The Argon2id parameters of a password slot; nil for other kinds.
    package let kdf: Argon2Parameters?
    let salt: [UInt8]
    let nonce: [UInt8]
    let sealedKey: [UInt8]

    /// A new slot `id` sealing `dataKey` for `opener`; `context` is the slot file's start.
    static func seal(_ dataKey: SecureBytes, id: UInt32, opener: Opener, kdf: Argon2Parameters,
                     context: [UInt8]) throws(CofferError) -> KeySlot {
        let unsealed = KeySlot(id: id, kind: opener.kind, created: Clock.now(), kdf: opener.kind == .password ? kdf : nil,
                               salt: Random.bytes(32), nonce: Random.nonce(AESGCM.nonceLength), sealedKey: [])
        let keyEncryptionKey = try unsealed.keyEncryptionKey(opener)
        let sealed = try CofferError.catching {
            try AESGCM.seal(dataKey, key: keyEncryptionKey, nonce: unsealed.nonce, aad: context + unsealed.descriptor)
        }
        return KeySlot(id: id, kind: unsealed.kind, created: unsealed.created, kdf: unsealed.kdf, salt: unsealed.salt,
                       nonce: unsealed.nonce, sealedKey: sealed)
    }

    /// The data key, or `authenticationFailed` if `opener` does not open this slot.
    func open(with opener: Opener, context: [UInt8]) throws(CofferError) -> SecureBytes {
        guard opener.kind == kind else { throw .authenticationFailed }
        let keyEncryptionKey = try keyEncryptionKey(opener)
        return try CofferError.catching { try AESGCM.open(sealedKey[...], key: keyEncryptionKey, nonce: nonce, aad: context + descriptor) }
    }

    /// The key that seals the data key in this slot.
    private func keyEncryptionKey(_ opener: Opener) throws(CofferError) -> SecureBytes {
        switch opener {
        case .password(let password):
            return try Self.passwordKey(password, salt: salt, kdf: kdf ?? .default)
        case .recoveryKey(let key):
            return try CofferError.catching {
                try HKDF.sha256(inputKeyMaterial: key.bytes, salt: salt, info: Array("coffer recovery key slot".utf8),
                                outputLength: AESGCM.keyLength)
            }
        }
    }

    /// Argon2id over the password behind a fixed leading byte, so that an empty password
    /// (which libgcrypt's Argon2 refuses, and which gnome-keyring users rely on) works too.
    static func passwordKey(_ password: SecureBytes, salt: [UInt8], kdf: Argon2Parameters) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let input = try SecureBytes(capacity: password.count + 1)
            try input.append(UInt8(0x01))
            try input.append(password)
            return try KDF.argon2id(password: input, salt: salt, parameters: kdf, outputLength: AESGCM.keyLength)
        }
    }

    /// Every byte of the slot before its nonce.
    private var descriptor: [UInt8] {
        var w = ByteWriter(capacity: 80)
        w.u8(kind.rawValue)
        w.u32(id)
        w.u64(created)
        if let kdf {
            w.u32(kdf.iterations)
            w.u32(kdf.memoryKiB)
            w.u32(kdf.parallelism)
        }
        w.field(salt)
        return w.bytes
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
            if kind == .password {
                let parameters = Argon2Parameters(iterations: try r.u32(), memoryKiB: try r.u32(), parallelism: try r.u32())
                guard parameters.isAcceptableFromFile else {
                    throw KeySlotsFile.Malformed(why: "key derivation parameters out of range (t=\(parameters.iterations), m=\(parameters.memoryKiB) KiB, p=\(parameters.parallelism))")
                }
                kdf = parameters
            }
            let salt = Array(r.bytes[try r.fieldRange()])
            let nonce = Array(try r.raw(AESGCM.nonceLength))
            let sealed = Array(r.bytes[try r.fieldRange()])
            guard salt.count >= 16, salt.count <= 64, sealed.count == AESGCM.keyLength + AESGCM.tagLength else {
                throw KeySlotsFile.Malformed(why: "a key slot's fields have wrong sizes")
            }
            return KeySlot(id: id, kind: kind, created: created, kdf: kdf, salt: salt, nonce: nonce, sealedKey: sealed)
        } catch is ByteReader.Truncated {
            throw KeySlotsFile.Malformed(why: "it is truncated")
        } catch let error as KeySlotsFile.Malformed {
            throw error
        } catch {
            throw KeySlotsFile.Malformed(why: "\(error)")
        }
    }
}
