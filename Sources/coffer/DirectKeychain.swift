import CofferCore
import CofferCrypto
import CofferStore

/// Direct mode: the encrypted files opened in this process (FileStore), so every command
/// unlocks with the password again and nothing stays unlocked after coffer exits.
final class DirectKeychain: KeychainBackend {
    let keychain: Keychain
    let directory: String

    init(directory: String) throws {
        self.directory = directory
        keychain = Keychain(provider: try FileStore(directory: directory), sessionCollection: false)
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
    func unlock(_ id: CollectionID, password: SecureBytes) throws { try keychain.unlock(id, password: password) }

    func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws {
        try keychain.changePassword(id, from: old, to: new)
    }

    func add(_ item: NewItem, to id: CollectionID, replace: Bool) throws -> (reference: ItemReference, replaced: Bool) {
        var item = item
        item.creator = Application.thisProgram
        let existing = replace ? try keychain.collection(id).itemIDs(withExactly: item.attributes) : []
        let reference = try keychain.add(item, to: id, onDuplicate: replace ? .replace : .fail)
        return (reference, existing.contains(reference.item))
    }

    func search(_ query: Query) throws -> [ItemMatch] {
        try keychain.search(query).map { ItemMatch(reference: $0.reference, isLocked: $0.isLocked, metadata: $0.metadata) }
    }

    func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws {
        try keychain.forEachSecret(of: references, body)
    }

    func update(_ query: Query, with changes: ItemChanges) throws -> [ItemReference] {
        try keychain.update(query, with: changes)
    }

    func delete(_ query: Query) throws -> [ItemReference] { try keychain.delete(query) }
}
