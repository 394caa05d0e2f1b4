import CofferCore
import CofferCrypto
import SystemKit

/// The collection's audit key (`AuditKey`): written beside it when its data key is at hand,
/// and used to open what the audit log sealed.
extension FileCollection {
    /// Writes the audit key file for `key` unless it holds that public key already (a
    /// collection made or unlocked for the first time since Coffer seals labels, or a key file
    /// lost or replaced). A failure is only warned about: the audit log then records the
    /// collection's events without their labels.
    func keepAuditKey(_ key: DataKey, uuid: [UInt8]) {
        let path = AuditKey.path(directory, id)
        do {
            let privateKey = try AuditKey.privateKey(dataKey: key, uuid: uuid)
            defer { privateKey.removeAll() }
            let publicKey = try X25519.publicKey(of: privateKey)
            guard AuditKey.readPublicKey(directory, id) != publicKey else { return }
            try AuditKey.writeFile(directory, id, uuid: uuid, publicKey: publicKey)
        } catch {
            warn("cannot write \(path) (\(error)): the audit log records the events of '\(id)' without their labels until it can")
        }
    }

    /// What opens the labels the audit log sealed to this collection. It must be unlocked.
    public func auditOpener() throws(CofferError) -> AuditOpener {
        try state.withLock { s throws(CofferError) in
            guard let key = s.dataKey else { throw .locked(id.rawValue) }
            return try AuditOpener(privateKey: AuditKey.privateKey(dataKey: key, uuid: s.log.header.uuid))
        }
    }
}
