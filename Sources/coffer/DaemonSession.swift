import CofferCore
import CofferCrypto
import DBusKit

/// A Secret Service transfer session opened with `dh-ietf1024-sha256-aes128-cbc-pkcs7`, so
/// that passwords and secrets cross the bus only AES-128-CBC encrypted under a key agreed by
/// Diffie-Hellman. Decoded secrets land in secure memory.
final class DaemonSession {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    let path: ObjectPath
    private let key: SecureBytes

    private init(path: ObjectPath, key: SecureBytes) {
        self.path = path
        self.key = key
    }

    /// Opens a session with the service (Service.OpenSession).
    static func open(on bus: DaemonBus) throws -> DaemonSession {
        let pair = try DHKeyPair()
        let reply = try bus.call(SecretBus.servicePath, SecretBus.service, "OpenSession",
                                 [.string(algorithm), .variant(.bytes(pair.publicKey))])
        guard reply.count == 2, let peer = reply[0].variantValue?.bytes, let path = reply[1].objectPath else {
            throw DaemonBus.unexpected("OpenSession")
        }
        let key = try SecretServiceKey.derive(sharedSecret: try pair.sharedSecret(peerPublicKey: peer))
        return DaemonSession(path: path, key: key)
    }

    /// The `(oayays)` struct carrying `bytes` (a password or a secret) to the service.
    func encode(_ bytes: SecureBytes, contentType: String = "text/plain") throws -> DBusValue {
        let iv = Random.bytes(AES128CBC.blockLength)
        let sealed = try AES128CBC.encrypt(bytes, key: key, iv: iv)
        return .structure([.objectPath(path), .bytes(iv), .bytes(sealed), .string(contentType)])
    }

    /// The secret inside an `(oayays)` struct the service encoded for this session.
    func decode(_ value: DBusValue) throws -> Secret {
        guard let fields = value.structureFields, fields.count == 4, let iv = fields[1].bytes,
              let sealed = fields[2].bytes, let contentType = fields[3].string,
              iv.count == AES128CBC.blockLength else {
            throw DaemonBus.unexpected("GetSecrets")
        }
        do {
            return Secret(bytes: try AES128CBC.decrypt(sealed, key: key, iv: iv), contentType: contentType)
        } catch {
            throw CLIError.storeFailure("a secret from the Secret Service cannot be decrypted with this session's key")
        }
    }

    /// Closes the session on the service (best effort: it also ends when coffer leaves the bus).
    func close(on bus: DaemonBus) {
        _ = try? bus.call(path, "org.freedesktop.Secret.Session", "Close")
    }
}
