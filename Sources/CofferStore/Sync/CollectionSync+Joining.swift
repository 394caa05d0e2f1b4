import CofferCore
import CofferCrypto
import SystemKit

/// How a collection starts syncing: enabled on the device that has it, joined on each other.
///
/// A synced folder has a key of its own (the folder key), made when sync is enabled; the
/// folder's `collection.keys` seals it with the sync password (the collection's password at
/// that time), so that another device can join with it. Nothing bound to one machine (a TPM
/// slot, the local collection's own key) ever enters the folder.
extension CollectionSync {
    static let keysFileName = "collection.keys"

    /// Starts syncing `collection` (unlocked) through `syncedFolder`, an absolute path that a
    /// sync tool carries: the collection's folder in it (named by a new uuid) gets a new folder
    /// key, sealed with `password` in `collection.keys`, and this device's file; the first
    /// round writes every item out. Returns the sync and the collection's folder.
    package static func enable(_ collection: FileCollection, directory: String, syncedFolder: String,
                               password: SecureBytes) throws(CofferError) -> (CollectionSync, folder: String) {
        guard syncedFolder.hasPrefix("/") else { throw .invalidArgument("the sync folder must be an absolute path") }
        try refuseIfSynced(collection, directory: directory)
        guard (try? FileStatus.of(syncedFolder))?.kind == .directory else {
            throw .invalidArgument("\(syncedFolder) is not a directory; give the folder your sync tool (Syncthing) shares")
        }
        let (folder, uuid, folderKey) = try makeFolder(in: syncedFolder, password: password, kdf: collection.kdf)
        return (try start(collection, directory: directory, folder: folder, uuid: uuid, folderKey: folderKey), folder)
    }

    /// Joins `collection` (unlocked: this device's own, which may hold items already, which
    /// then go to the others) to the synced folder `folder` (the one `enable` made, holding
    /// `collection.keys`), opening its key with the sync password; the first round brings
    /// every item in and sends this device's out. A collection synced through another folder
    /// moves to this one (where another device moved it, removing a device); items the two
    /// folders both hold are matched by content, not doubled.
    package static func join(_ collection: FileCollection, directory: String, folder: String,
                             password: SecureBytes) throws(CofferError) -> CollectionSync {
        guard folder.hasPrefix("/") else { throw .invalidArgument("the sync folder must be an absolute path") }
        if let existing = try SyncState.peek(directory: directory, id: collection.id), existing.folder == folder {
            throw .invalidArgument("collection '\(collection.id.rawValue)' is synced through \(folder) already")
        }
        let keysPath = "\(folder)/\(keysFileName)"
        guard (try? FileStatus.of(keysPath))?.kind == .regular else {
            throw .invalidArgument("\(folder) holds no synced collection (no \(keysFileName)); give the folder 'coffer sync enable' made on the first device, which 'coffer sync status' shows there")
        }
        let slots = try KeySlotsFile.read(path: keysPath)
        let (folderKey, _) = try slots.open(with: .password(password), file: keysPath)
        try slots.verify(dataKey: folderKey, file: keysPath)
        return try start(collection, directory: directory, folder: folder, uuid: slots.uuid, folderKey: folderKey)
    }

    /// A new collection folder in `parent`: a new uuid names it, and its new folder key is
    /// sealed by `password` in its `collection.keys`.
    static func makeFolder(in parent: String, password: SecureBytes,
                           kdf: Argon2Parameters) throws(CofferError) -> (folder: String, uuid: [UInt8], key: SecureBytes) {
        let key = try CofferError.catching { try Random.secureBytes(AESGCM.keyLength) }
        let uuid = Random.bytes(16)
        let folder = "\(parent)/\(Hex.encode(uuid))"
        let slots = try KeySlotsFile.first(uuid: uuid, dataKey: key, opener: .password(password), kdf: kdf)
        do throws(Errno) {
            try FileSystem.makeDirectories(folder, permissions: 0o700)
        } catch {
            throw .io("cannot create the sync folder \(folder): \(error.reason)")
        }
        try PosixFile.replace("\(folder)/\(keysFileName)", with: slots.encoded())
        return (folder, uuid, key)
    }

    private static func refuseIfSynced(_ collection: FileCollection, directory: String) throws(CofferError) {
        if let existing = try SyncState.peek(directory: directory, id: collection.id) {
            throw .invalidArgument("collection '\(collection.id.rawValue)' is synced already, through \(existing.folder)")
        }
    }

    /// Gives the collection its sync state (a new device id) and file, then runs the first round.
    private static func start(_ collection: FileCollection, directory: String, folder: String, uuid: [UInt8],
                              folderKey: SecureBytes) throws(CofferError) -> CollectionSync {
        guard let device = DeviceID(Random.bytes(16)) else { throw .io("cannot make a device id") }
        let state = SyncState(uuid: uuid, device: device, folder: folder, folderKey: folderKey)
        try SyncDeviceFile(folder: folder, collection: uuid, device: device).create()
        try state.write(directory: directory, id: collection.id, key: try collection.syncStateKey())
        let sync = CollectionSync(collection: collection, directory: directory)
        try sync.sync()
        return sync
    }
}
