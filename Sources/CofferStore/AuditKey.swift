import CofferCore
import CofferCrypto
import SystemKit

/// The key pair a collection's audit log lines seal its labels to (X25519), so that the log
/// says no more than the collection file to whoever copies the store directory: the public
/// key is kept in clear beside the collection, so lines can be written while it is locked;
/// the private key is derived from the collection's data key, so only its password (or a
/// process holding the collection unlocked) opens what was sealed.
///
/// `<id>.auditkey` (0600):
///
/// ```
/// "COFFERAK"  magic (8)
/// u16 version (1)
/// 16  collection uuid (the header's)
/// 32  public key
/// u32 CRC-32 of all of the above
/// ```
///
/// Private key: HKDF-SHA256(data key, salt: uuid, info: "coffer audit key v1"), 32 bytes.
package enum AuditKey {
    static let magic = Array("COFFERAK".utf8)
    static let version: UInt16 = 1
    static let fileExtension = ".auditkey"
    static let fileLength = 8 + 2 + 16 + X25519.keyLength + 4

    static func path(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue)\(fileExtension)" }

    /// The collection's private key, from its data key.
    static func privateKey(dataKey: DataKey, uuid: [UInt8]) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            try HKDF.sha256(inputKeyMaterial: dataKey.bytes, salt: uuid, info: Array("coffer audit key v1".utf8),
                            outputLength: X25519.keyLength)
        }
    }

    static func encodeFile(uuid: [UInt8], publicKey: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: fileLength)
        w.raw(magic)
        w.u16(version)
        w.raw(uuid)
        w.raw(publicKey)
        w.u32(Digest.crc32(w.bytes[...]))
        return w.bytes
    }

    /// The uuid and public key a key file holds, or nil when it is not a whole key file.
    static func decodeFile(_ bytes: [UInt8]) -> (uuid: [UInt8], publicKey: [UInt8])? {
        guard bytes.count == fileLength else { return nil }
        var r = ByteReader(bytes)
        guard let start = try? r.raw(8), Array(start) == magic, (try? r.u16()) == version,
              let uuid = try? r.raw(16), let publicKey = try? r.raw(X25519.keyLength),
              (try? r.u32()) == Digest.crc32(bytes[0..<fileLength - 4])
        else { return nil }
        return (Array(uuid), Array(publicKey))
    }

    /// Writes the key file of `id` (beside, then renamed over the old one).
    package static func writeFile(_ directory: String, _ id: CollectionID, uuid: [UInt8], publicKey: [UInt8]) throws(Errno) {
        try FileSystem.replace(path(directory, id), with: encodeFile(uuid: uuid, publicKey: publicKey), permissions: 0o600)
    }

    /// The public key in the key file of `id`, or nil when there is none (a collection not
    /// unlocked since Coffer began sealing) or it cannot be read. Symbolic links are not followed.
    static func readPublicKey(_ directory: String, _ id: CollectionID) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(path(directory, id), .readOnly, options: [.noFollow, .nonBlocking]) else { return nil }
        defer { file.close() }
        guard let bytes = try? file.read(upTo: fileLength + 1) else { return nil }
        return decodeFile(bytes)?.publicKey
    }

    /// What a sealed label is bound to: the line's collection, item and time, so that it
    /// cannot be moved onto another line unnoticed.
    static func associatedData(collection: CollectionID, item: ItemID?, time: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.raw(Array("coffer audit label v1".utf8))
        w.field(Array(collection.rawValue.utf8))
        w.u64(item ?? 0)
        w.u64(time)
        return w.bytes
    }

    /// The key a sealed label is encrypted with, from the shared secret of the writer's
    /// ephemeral key and the collection's key.
    static func labelKey(shared: SecureBytes, ephemeralPublic: [UInt8], publicKey: [UInt8]) throws -> SecureBytes {
        try HKDF.sha256(inputKeyMaterial: shared, salt: ephemeralPublic + publicKey,
                        info: Array("coffer audit label key v1".utf8), outputLength: AESGCM.keyLength)
    }
}

/// Seals labels to one collection's public key. A sealer makes one ephemeral key pair and
/// derives one AES-GCM key from it, so sealing a label costs one AES-GCM encryption. It keeps
/// the 32 key bytes, not a cipher handle, so that a sealer per collection takes next to none
/// of the secure memory the daemon's clients need.
///
/// A sealed label: the ephemeral public key (32), a nonce (12), then the label encrypted with
/// its tag (16), under `AuditKey.labelKey`, with `AuditKey.associatedData` of its line.
public final class AuditSealer: Sendable {
    let publicKey: [UInt8]
    private let ephemeralPublic: [UInt8]
    private let key: SecureBytes

    init(publicKey: [UInt8]) throws {
        self.publicKey = publicKey
        let ephemeral = try X25519.newPrivateKey()
        defer { ephemeral.removeAll() }
        ephemeralPublic = try X25519.publicKey(of: ephemeral)
        let shared = try X25519.sharedSecret(privateKey: ephemeral, peerPublicKey: publicKey)
        defer { shared.removeAll() }
        key = try AuditKey.labelKey(shared: shared, ephemeralPublic: ephemeralPublic, publicKey: publicKey)
    }

    /// `label` sealed for a line of `collection`, `item` and `time` (nil if encryption failed).
    func seal(_ label: String, collection: CollectionID, item: ItemID?, time: UInt64) -> [UInt8]? {
        let nonce = Random.nonce(AESGCM.nonceLength)
        let aad = AuditKey.associatedData(collection: collection, item: item, time: time)
        guard let sealed = try? AESGCM.seal(Array(label.utf8), key: key, nonce: nonce, aad: aad) else { return nil }
        return ephemeralPublic + nonce + sealed
    }
}

/// Opens the labels sealed to one collection, with its private key (from `FileCollection.auditOpener`).
public final class AuditOpener {
    private let privateKey: SecureBytes
    private let publicKey: [UInt8]
    /// The label key of each writer seen (one ephemeral key per writing process and collection).
    private var keys: [[UInt8]: AESGCMKey] = [:]

    package init(privateKey: SecureBytes) throws(CofferError) {
        self.privateKey = privateKey
        publicKey = try CofferError.catching { try X25519.publicKey(of: privateKey) }
    }

    deinit { privateKey.removeAll() }

    /// The label `sealed` holds, or nil when it was not sealed to this collection or was
    /// changed (or moved from another line).
    public func open(_ sealed: [UInt8], collection: CollectionID, item: ItemID?, time: UInt64) -> String? {
        let header = X25519.keyLength + AESGCM.nonceLength
        guard sealed.count >= header + AESGCM.tagLength else { return nil }
        let ephemeralPublic = Array(sealed[0..<X25519.keyLength])
        let key: AESGCMKey
        if let known = keys[ephemeralPublic] {
            key = known
        } else {
            guard let shared = try? X25519.sharedSecret(privateKey: privateKey, peerPublicKey: ephemeralPublic),
                  let derived = try? AESGCMKey(AuditKey.labelKey(shared: shared, ephemeralPublic: ephemeralPublic, publicKey: publicKey))
            else { return nil }
            shared.removeAll()
            keys[ephemeralPublic] = derived
            key = derived
        }
        let aad = AuditKey.associatedData(collection: collection, item: item, time: time)
        guard let label = try? key.open(sealed[header...], nonce: Array(sealed[X25519.keyLength..<header]), aad: aad) else { return nil }
        defer { label.removeAll() }
        return String(validating: label.unprotectedArray(0..<label.count), as: UTF8.self)
    }
}
