import CofferCore
import CofferCrypto
import DBusKit

/// A client's session: how secrets travel between it and the service.
///
/// `plain` sends secrets as they are; `dh-ietf1024-sha256-aes128-cbc-pkcs7` agrees on an
/// AES-128 key by Diffie-Hellman in the 1024-bit MODP group (HKDF-SHA256 over the shared
/// secret padded to 128 bytes) and sends each secret AES-CBC encrypted under a fresh IV.
final class TransferSession {
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
    var lastUsed: UInt64 = 0

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
            return (TransferSession(path: path, owner: owner, algorithm: .plain), .variant(.string("")))
        case dhName:
            guard case .bytes(let peer) = input else {
                throw .invalidArgs("\(dhName) takes the client's public key as a byte array")
            }
            do {
                let pair = try DHKeyPair()
                let shared = try pair.sharedSecret(peerPublicKey: peer)
                let key = try SecretServiceKey.derive(sharedSecret: shared)
                return (TransferSession(path: path, owner: owner, algorithm: .dh(try AES128CBCKey(key))), .variant(.bytes(pair.publicKey)))
            } catch CryptoError.invalidInput(let why) {
                throw .invalidArgs("unusable public key: \(why)")
            } catch CryptoError.secureMemoryExhausted {
                throw SecretError.outOfSecureMemory
            } catch {
                throw .failed("key agreement failed")
            }
        default:
            throw .notSupported("algorithm '\(name)' is not supported; use '\(plainName)' or '\(dhName)'")
        }
    }

    /// The `(oayays)` struct carrying `secret` to this session's client.
    func encode(_ secret: Secret) throws(DBusError) -> DBusValue {
        switch algorithm {
        case .plain:
            return secret.bytes.withUnprotectedCopy { bytes in
                .structure([.objectPath(path), .bytes([]), .bytes(bytes), .string(secret.contentType)])
            }
        case .dh(let cipher):
            // Unpredictable without a system call per secret (libgcrypt's nonce generator).
            let iv = Random.nonce(AES128CBC.blockLength)
            do {
                let sealed = try cipher.encrypt(secret.bytes, iv: iv)
                return .structure([.objectPath(path), .bytes(iv), .bytes(sealed), .string(secret.contentType)])
            } catch CryptoError.secureMemoryExhausted {
                throw SecretError.outOfSecureMemory
            } catch {
                throw .failed("cannot encrypt the secret for the session")
            }
        }
    }

    /// The most bytes an encoded secret may have: the size limit plus a block of padding.
    static let maxEncodedSecretBytes = Limits.maxSecretBytes + AES128CBC.blockLength

    /// The secret inside an `(oayays)` struct the client encoded for this session.
    func decode(parameters: [UInt8], value: [UInt8], contentType: String) throws(DBusError) -> Secret {
        try Self.checkSizes(value: value, contentType: contentType)
        var value = value
        switch algorithm {
        case .plain:
            guard parameters.isEmpty else { throw .invalidArgs("plain secrets carry no parameters") }
            do {
                return Secret(bytes: try SecureBytes(wiping: &value), contentType: contentType)
            } catch {
                throw SecretError.outOfSecureMemory
            }
        case .dh(let cipher):
            guard parameters.count == AES128CBC.blockLength else {
                throw .invalidArgs("the secret's parameters must be a 16-byte IV")
            }
            do {
                return Secret(bytes: try cipher.decrypt(value, iv: parameters), contentType: contentType)
            } catch CryptoError.secureMemoryExhausted {
                throw SecretError.outOfSecureMemory
            } catch {
                throw .invalidArgs("the secret cannot be decrypted with this session's key")
            }
        }
    }

    /// Rejects an oversized secret or content type before anything goes into secure memory
    /// (a huge value would fill the pool and fail as "out of secure memory").
    static func checkSizes(value: [UInt8], contentType: String) throws(DBusError) {
        guard value.count <= maxEncodedSecretBytes else {
            throw .invalidArgs("secrets must be at most \(Limits.maxSecretBytes) bytes; this one has \(value.count)")
        }
        guard contentType.utf8.count <= Limits.maxContentTypeBytes else {
            throw .invalidArgs("content types must be at most \(Limits.maxContentTypeBytes) bytes")
        }
    }
}
