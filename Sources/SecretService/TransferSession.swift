import CofferCore
import CofferCrypto
import DBusKit
import SecretServiceProtocol
import Synchronization

/// A client's session: how secrets travel between it and the service.
///
/// `plain` sends secrets as they are; `dh-ietf1024-sha256-aes128-cbc-pkcs7` agrees on an
/// AES-128 key by Diffie-Hellman in the 1024-bit MODP group (HKDF-SHA256 over the shared
/// secret padded to 128 bytes) and sends each secret AES-CBC encrypted under a fresh IV.
/// Either way the value stays in secure memory up to the D-Bus message.
final class TransferSession: Sendable {
    enum Algorithm {
        case plain
        case dh(AES128CBCKey)
    }

    static let plainName = "plain"
    static let dhName = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    let path: ObjectPath
    /// The unique bus name of the client that opened it; only it may use it.
    let owner: String
    let algorithm: Algorithm
    /// When it was last opened or used, on the server's clock of calls (for evicting the
    /// least recently used session of a client that holds too many).
    var lastUsed: UInt64 {
        get { used.load(ordering: .relaxed) }
        set { used.store(newValue, ordering: .relaxed) }
    }
    private let used = Atomic<UInt64>(0)

    private init(path: ObjectPath, owner: String, algorithm: Algorithm) {
        self.path = path
        self.owner = owner
        self.algorithm = algorithm
    }

    /// Negotiates a session from `OpenSession`'s arguments; returns it with the output value.
    static func open(algorithm name: String, input: DBusValue, path: ObjectPath,
                     owner: String) throws(DBusError) -> (TransferSession, DBusValue) {
        switch name {
        case plainName:
            guard case .string = input else {
                throw .invalidArgs("the plain algorithm takes an empty string as input")
            }
            return (TransferSession(path: path, owner: owner, algorithm: .plain), .string(""))
        case dhName:
            guard case .bytes(let peer) = input else {
                throw .invalidArgs("\(dhName) takes the client's public key as a byte array")
            }
            do {
                let pair = try DHKeyPair()
                let shared = try pair.sharedSecret(peerPublicKey: peer)
                let key = try SecretServiceKey.derive(sharedSecret: shared)
                return (TransferSession(path: path, owner: owner, algorithm: .dh(try AES128CBCKey(key))), .bytes(pair.publicKey))
            } catch CryptoError.invalidInput(let why) {
                throw .invalidArgs("unusable public key: \(why)")
            } catch CryptoError.secureMemoryExhausted {
                throw SecretServiceError.outOfSecureMemory.dbusError
            } catch {
                throw .failed("key agreement failed")
            }
        default:
            throw .notSupported("algorithm '\(name)' is not supported; use '\(plainName)' or '\(dhName)'")
        }
    }

    /// `secret` as it travels to this session's client. A plain session sends the secret's own
    /// secure buffer: no copy of it is made before libdbus marshals it.
    func encode(_ secret: Secret) throws(DBusError) -> WireSecret {
        switch algorithm {
        case .plain:
            return WireSecret(session: path, parameters: [], value: secret.bytes, contentType: secret.contentType)
        case .dh(let cipher):
            return try seal(secret, iv: Random.nonce(AES128CBC.blockLength), with: try Self.encrypting { try cipher.encryptor() })
        }
    }

    /// Runs `body` with an encoder for up to `count` secrets of one reply: a DH session opens
    /// one cipher handle and draws the IVs of all of them at once.
    func encodeEach(upTo count: Int, _ body: (_ encode: (Secret) throws(DBusError) -> WireSecret) throws -> Void) throws {
        switch algorithm {
        case .plain:
            try body { secret throws(DBusError) in try encode(secret) }
        case .dh(let cipher):
            // Unpredictable without a system call per secret (libgcrypt's nonce generator).
            let ivs = Random.nonce(AES128CBC.blockLength * max(count, 0))
            let encryptor = try Self.encrypting { try cipher.encryptor() }
            var used = 0
            try body { secret throws(DBusError) in
                guard used < count else { throw .failed("more secrets than announced for one reply") }
                used += 1
                return try seal(secret, iv: Array(ivs[(used - 1) * AES128CBC.blockLength..<used * AES128CBC.blockLength]), with: encryptor)
            }
        }
    }

    private func seal(_ secret: Secret, iv: [UInt8], with encryptor: AES128CBCKey.Encryptor) throws(DBusError) -> WireSecret {
        let sealed = try Self.encrypting { try encryptor.seal(secret.bytes, iv: iv) }
        return WireSecret(session: path, parameters: iv, value: sealed, contentType: secret.contentType)
    }

    /// What `work` makes, its failure as the error a client gets.
    private static func encrypting<R>(_ work: () throws -> R) throws(DBusError) -> R {
        do {
            return try work()
        } catch CryptoError.secureMemoryExhausted {
            throw SecretServiceError.outOfSecureMemory.dbusError
        } catch {
            throw .failed("cannot encrypt the secret for the session")
        }
    }

    /// The secret a client encoded for this session. The reader has already refused a value
    /// longer than `WireSecret.secretLimit`.
    func decode(_ wire: WireSecret) throws(DBusError) -> Secret {
        guard wire.contentType.utf8.count <= Limits.maxContentTypeBytes else {
            throw .invalidArgs("content types must be at most \(Limits.maxContentTypeBytes) bytes")
        }
        switch algorithm {
        case .plain:
            guard wire.parameters.isEmpty else { throw .invalidArgs("plain secrets carry no parameters") }
            return Secret(bytes: wire.value, contentType: wire.contentType)
        case .dh(let cipher):
            guard wire.parameters.count == AES128CBC.blockLength else {
                throw .invalidArgs("the secret's parameters must be a 16-byte IV")
            }
            do {
                return Secret(bytes: try cipher.decrypt(wire.value, iv: wire.parameters), contentType: wire.contentType)
            } catch CryptoError.secureMemoryExhausted {
                throw SecretServiceError.outOfSecureMemory.dbusError
            } catch {
                throw .invalidArgs("the secret cannot be decrypted with this session's key")
            }
        }
    }
}
