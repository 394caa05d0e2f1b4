import CofferCrypto
import DBusKit
import SecretServiceProtocol

/// How a session protects secrets on the bus.
public enum SessionSecurity: Sendable {
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7` or nothing: opening fails where the provider does
    /// not support it.
    case encrypted
    /// Encrypted where the provider can; else `plain`, which the session says
    /// (`ClientSession.isEncrypted`) rather than silently.
    case preferEncrypted
    /// `plain`: secrets cross the bus as they are (the bus is local to the user, but any
    /// eavesdropping monitor sees them).
    case plain
}

/// A transfer session with the provider: encodes what the client sends and decodes what it
/// gets, always in secure memory.
public final class ClientSession: Sendable {
    public static let plainAlgorithm = "plain"
    public static let encryptedAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    public let path: ObjectPath
    /// Whether secrets travel AES-encrypted (false: `plain`).
    public var isEncrypted: Bool { key != nil }
    private let key: AES128CBCKey?

    private init(path: ObjectPath, key: AES128CBCKey?) {
        self.path = path
        self.key = key
    }

    static func open(with client: SecretServiceClient, security: SessionSecurity) throws -> ClientSession {
        if security == .plain { return try openPlain(with: client) }
        do {
            let pair = try DHKeyPair()
            return try openEncrypted(with: client, keyPair: pair, sending: pair.publicKey).session
        } catch let error as DBusError where error.name == DBusError.Name.notSupported && security == .preferEncrypted {
            return try openPlain(with: client)
        }
    }

    /// Opens a DH session for `pair`, sending `publicKey`: its public key, or (to test a
    /// provider's key agreement) the same number with other leading zeros. Also returns the
    /// shared secret both sides derived the key from.
    @_spi(KeyAgreement)
    public static func openEncrypted(with client: SecretServiceClient, keyPair pair: DHKeyPair,
                                     sending publicKey: [UInt8]) throws -> (session: ClientSession, sharedSecret: SecureBytes) {
        let reply = try client.call(ServiceInterface.OpenSession.self, on: SecretPath.service,
                                    .init(algorithm: encryptedAlgorithm, input: .bytes(publicKey)))
        guard case .bytes(let peer) = reply.output.value else { throw SecretServiceClient.unexpected("OpenSession") }
        let shared = try pair.sharedSecret(peerPublicKey: peer)
        let key = try AES128CBCKey(try SecretServiceKey.derive(sharedSecret: shared))
        return (ClientSession(path: reply.session, key: key), shared)
    }

    private static func openPlain(with client: SecretServiceClient) throws -> ClientSession {
        let reply = try client.call(ServiceInterface.OpenSession.self, on: SecretPath.service,
                                    .init(algorithm: plainAlgorithm, input: .string("")))
        return ClientSession(path: reply.session, key: nil)
    }

    /// `bytes` (a secret or a password) as it travels to the provider.
    public func encode(_ bytes: SecureBytes, contentType: String = "text/plain") throws -> WireSecret {
        guard let key else { return WireSecret(session: path, parameters: [], value: bytes, contentType: contentType) }
        let iv = Random.bytes(AES128CBC.blockLength)
        let sealed = try key.seal(bytes, iv: iv)
        return WireSecret(session: path, parameters: iv, value: sealed, contentType: contentType)
    }

    /// The secret inside what the provider sent for this session.
    public func decode(_ wire: WireSecret) throws -> Secret {
        guard let key else { return Secret(bytes: wire.value, contentType: wire.contentType) }
        do {
            return Secret(bytes: try key.decrypt(wire.value, iv: wire.parameters), contentType: wire.contentType)
        } catch CryptoError.secureMemoryExhausted(let requested) {
            throw CryptoError.secureMemoryExhausted(requested: requested)
        } catch {
            throw DBusError.failed("a secret from the Secret Service cannot be decrypted with this session's key")
        }
    }
}

extension SecretServiceClient {
    /// Opens a transfer session (close it with `closeSession`, or let it end with the
    /// connection).
    public func openSession(_ security: SessionSecurity = .encrypted) throws -> ClientSession {
        try ClientSession.open(with: self, security: security)
    }

    public func closeSession(_ session: ClientSession) throws(DBusError) {
        _ = try call(SessionInterface.Close.self, on: session.path, NoArguments())
    }
}
