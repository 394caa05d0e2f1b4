import CofferCore
import CofferCrypto

/// What the commands need of a keychain, whether coffer opens the store files itself
/// (`DirectKeychain`) or asks a running Secret Service over D-Bus (`DaemonKeychain`).
///
/// Errors are `CofferError` where one fits (so that `CLIError` explains them the same way in
/// both modes: `.authenticationFailed`, `.locked`, `.duplicateItem`, ...), else `CLIError`.
protocol KeychainBackend: AnyObject {
    /// True when collections stay unlocked between commands (a daemon keeps them so).
    var keepsUnlocked: Bool { get }

    // MARK: Collections and aliases

    /// Every collection id (persistent ones sorted; the daemon's in-memory `session` last).
    func collectionIDs() throws -> [CollectionID]
    func info(_ id: CollectionID) throws -> CollectionInfo
    /// Every alias that names an existing collection, `default` included.
    func aliases() throws -> [String: CollectionID]
    func resolveAlias(_ name: String) throws -> CollectionID?
    func setAlias(_ name: String, to collection: CollectionID?) throws
    /// Creates collection `id` (which must not exist) labelled `label`; returns its id.
    func createCollection(_ id: CollectionID, label: String, password: SecureBytes) throws -> CollectionID
    func deleteCollection(_ id: CollectionID) throws

    // MARK: Locking

    func lock(_ id: CollectionID) throws
    /// Throws `CofferError.authenticationFailed` for a wrong password.
    func unlock(_ id: CollectionID, password: SecureBytes) throws
    /// Unlocks through the collection's TPM key slot, with `pin` if it has one; throws
    /// `CofferError.authenticationFailed` for a wrong PIN.
    func unlockWithTPM(_ id: CollectionID, pin: SecureBytes?) throws
    /// Throws `CofferError.authenticationFailed` when `old` is wrong.
    func changePassword(_ id: CollectionID, from old: SecureBytes, to new: SecureBytes) throws

    // MARK: Items

    /// Adds `item` to the unlocked collection `id`. An item with exactly the same attributes
    /// is overwritten in place with `replace` (then `replaced` is true), else it makes the add
    /// fail with `CofferError.duplicateItem`.
    func add(_ item: NewItem, to id: CollectionID, replace: Bool) throws -> (reference: ItemReference, replaced: Bool)
    /// The matches of `query` in its collection (`query.collection` is always set by the
    /// commands). Matching works while locked; labels and attributes need the collection
    /// unlocked. Secrets come from `forEachSecret`.
    func search(_ query: Query) throws -> [ItemMatch]
    /// Hands `body` the secret of each of `references` (with its position) that still exists
    /// in an unlocked collection, one at a time, so that any number of secrets needs secure
    /// memory for one only.
    func forEachSecret(of references: [ItemReference], _ body: (Int, Secret) throws -> Void) throws
    /// Applies `changes` to every match; `CofferError.itemNotFound` when nothing matches,
    /// `.locked` when the collection is locked.
    func update(_ query: Query, with changes: ItemChanges) throws -> [ItemReference]
    /// Deletes the matches (the first only with `.one`); nothing matching is not an error.
    func delete(_ query: Query) throws -> [ItemReference]
}

/// One search match, as the commands print it. Matches in a locked collection carry only
/// their reference.
struct ItemMatch {
    let reference: ItemReference
    let isLocked: Bool
    /// Present when asked for and the collection is unlocked.
    let metadata: ItemMetadata?
}
