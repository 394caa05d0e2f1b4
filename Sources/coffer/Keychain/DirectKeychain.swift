import CofferCore
import CofferCrypto
import CofferStore
import FoundationEssentials
import TPMKit

/// Direct mode: the encrypted files opened in this process (FileStore), so every command
/// unlocks with the password again and nothing stays unlocked after coffer exits.
final class DirectKeychain: KeychainBackend {
    let keychain: Keychain
    let directory: String
    /// What this process does to the files goes to the store's audit log, as the daemon's does.
    private let audit: AuditLogFile
    private let program = Application.thisProgram

    private let store: FileStore

    init(directory: String) throws {
        self.directory = directory
        store = try FileStore(directory: directory)
        keychain = Keychain(provider: store, sessionCollection: false)
        audit = AuditLogFile(directory: directory)
    }

    // MARK: Key slots (in the store's files, whether a daemon runs or not)

    func keySlots(_ id: CollectionID) throws -> [KeySlot] {
        try store.fileCollection(id).keySlots()
    }

    func addRecoveryKey(_ id: CollectionID, password: SecureBytes) throws -> (RecoveryKey, KeySlot) {
        let collection = try store.fileCollection(id)
        return try recordingKeyChange(id, "recovery key slot added") {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try collection.addRecoveryKey(password: password) }
        }
    }

    func removeKeySlot(_ slot: UInt32, of id: CollectionID, password: SecureBytes) throws {
        let collection = try store.fileCollection(id)
        try recordingKeyChange(id, "key slot \(slot) removed") {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try collection.removeKeySlot(slot, password: password) }
        }
    }

    func recover(_ id: CollectionID, with recoveryKey: RecoveryKey, newPassword: SecureBytes) throws {
        let collection = try store.fileCollection(id)
        try recordingKeyChange(id, "new password set with the recovery key") {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try collection.recover(with: recoveryKey, newPassword: newPassword) }
        }
    }

    // MARK: Sync (the store's files and the synced folder, whether a daemon runs or not)

    /// Collection `id` opened in this process and unlocked with `password` (throttled as
    /// every unlock is), for the sync commands.
    func unlockedFileCollection(_ id: CollectionID, password: SecureBytes) throws -> FileCollection {
        let collection = try store.fileCollection(id)
        try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try collection.unlock(password: password) }
        return collection
    }

    /// Runs a change of `id`'s keys — its key slots, or its sync's (enabling, joining,
    /// restoring a lost version) — and records it (`keys`), done or failed, as `detail`.
    func recordingKeyChange<R>(_ id: CollectionID, _ detail: String, _ change: () throws -> R) throws -> R {
        let label = try? keychain.info(id).label
        do {
            let result = try change()
            audit.record(AuditEvent(action: .keys, outcome: .ok, application: program, collection: id, label: label, detail: detail))
            return result
        } catch {
            audit.record(AuditEvent(action: .keys, outcome: .failed, application: program, collection: id, label: label,
                                    detail: detail + (isWrongPassword(error) ? ": wrong password or key" : ": \(error)")))
            throw error
        }
    }

    private func record(_ action: AuditEvent.Action, _ reference: ItemReference, outcome: AuditEvent.Outcome = .ok,
                        label: String? = nil, detail: String) {
        audit.record(AuditEvent(action: action, outcome: outcome, application: program, collection: reference.collection,
                                item: reference.item, label: label ?? (try? keychain.metadata(of: reference).label), detail: detail))
    }

    var keepsUnlocked: Bool { false }

    func collectionIDs() throws -> [CollectionID] { try keychain.collectionIDs() }
    func info(_ id: CollectionID) throws -> CollectionInfo { try keychain.info(id) }
    func aliases() throws -> [String: CollectionID] { try keychain.aliases() }
    func resolveAlias(_ name: String) throws -> CollectionID? { try keychain.resolveAlias(name) }
    func setAlias(_ name: String, to collection: CollectionID?) throws { try keychain.setAlias(name, to: collection) }

    func createCollection(_ id: CollectionID, label: String, password: SecureBytes) throws -> CollectionID {
        try keychain.createCollection(label: label, id: id, password: password)
    }

    func deleteCollection(_ id: CollectionID) throws { try keychain.deleteCollection(id) }
    func lock(_ id: CollectionID) throws { try keychain.lock(id) }

    func unlock(_ id: CollectionID, password: SecureBytes) throws {
        let label = try? keychain.info(id).label
        do {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try keychain.unlock(id, password: password) }
            audit.record(AuditEvent(action: .unlock, outcome: .ok, application: program, collection: id, label: label,
                                    detail: "password given to coffer"))
        } catch {
            if isWrongPassword(error) {
                audit.record(AuditEvent(action: .unlock, outcome: .failed, application: program, collection: id, label: label,
                                        detail: "wrong password given to coffer"))
            }
            throw error
        }
    }

    func unlockWithTPM(_ id: CollectionID, pin: SecureBytes?) throws {
        let label = try? keychain.info(id).label
        guard let collection = try keychain.collection(id) as? FileCollection else { throw CofferError.collectionNotFound(id.rawValue) }
        do {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try collection.unlock(tpm: .configured(ProcessInfo.processInfo.environment), pin: pin) }
            audit.record(AuditEvent(action: .unlock, outcome: .ok, application: program, collection: id, label: label,
                                    detail: "TPM key slot, by coffer"))
        } catch {
            audit.record(AuditEvent(action: .unlock, outcome: .failed, application: program, collection: id, label: label,
                                    detail: isWrongPassword(error) ? "wrong TPM PIN given to coffer" : "TPM key slot, by coffer: \(error)"))
            throw error
        }
    }

    /// Adds a TPM key slot to `id` (see `FileCollection.addTPMSlot`).
    func addTPMSlot(_ id: CollectionID, pin: SecureBytes?, pcrs: PCRSelection, password: SecureBytes) throws -> KeySlot {
        let collection = try store.fileCollection(id)
        return try recordingKeyChange(id, "TPM key slot added") {
            try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in
                try collection.addTPMSlot(.configured(ProcessInfo.processInfo.environment), pin: pin, pcrs: pcrs, password: password)
            }
        }
    }

    func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws {
        try Keychain.waitingOutThrottle(of: id) { () throws(CofferError) in try keychain.changePassword(id, from: old, to: new) }
    }

    func add(_ item: NewItem, to id: CollectionID, replace: Bool) throws -> (reference: ItemReference, replaced: Bool) {
        var item = item
        item.creator = Application.thisProgram
        let existing = replace ? try keychain.collection(id).itemIDs(withExactly: item.attributes) : []
        let reference = try keychain.add(item, to: id, onDuplicate: replace ? .replace : .fail)
        let replaced = existing.contains(reference.item)
        record(.write, reference, detail: replaced ? "replaced by coffer" : "created by coffer")
        return (reference, replaced)
    }

    func search(_ query: Query) throws -> [ItemMatch] {
        try keychain.search(query).map { ItemMatch(reference: $0.reference, isLocked: $0.isLocked, metadata: $0.metadata) }
    }

    func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws {
        // Labels first: the store is not re-entered while it hands out secrets.
        let labels = references.map { try? keychain.metadata(of: $0).label }
        try keychain.forEachSecret(of: references) { position, secret in
            record(.read, references[position], label: labels[position], detail: "collection password given to coffer")
            try body(position, secret)
        }
    }

    func update(_ query: Query, with changes: ItemChanges) throws -> [ItemReference] {
        let changed = try keychain.update(query, with: changes)
        for reference in changed { record(.write, reference, detail: "changed by coffer") }
        return changed
    }

    func delete(_ query: Query) throws -> [ItemReference] {
        let labels = try keychain.search(Query(attributes: query.attributes, collection: query.collection, limit: query.limit,
                                               returnAttributes: true))
        let deleted = try keychain.delete(query)
        for match in labels where deleted.contains(match.reference) {
            record(.delete, match.reference, label: match.metadata?.label, detail: "deleted by coffer")
        }
        return deleted
    }
}

extension Keychain {
    /// Runs `attempt` (an unlock or a password change of collection `id`), waiting out, and
    /// saying on stderr, the wait that wrong passwords given for it before impose.
    static func waitingOutThrottle<R>(of id: CollectionID, _ attempt: () throws(CofferError) -> R) throws(CofferError) -> R {
        try waitingOutThrottle(announce: { Output.note("wrong passwords were given for '\(id)' before: this one is checked in \($0) second\($0 == 1 ? "" : "s")") },
                               attempt)
    }
}
