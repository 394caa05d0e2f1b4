import CofferCore
import CofferCrypto
import SystemKit

/// How a collection starts syncing: enabled on the device that has it, joined on each other.
extension CollectionSync {
    /// The key slots that travel with a collection, in its folder (password, recovery key;
    /// never a TPM's).
    static let keysFileName = "collection.keys"

    /// Starts syncing `collection` (unlocked) through `syncedFolder`, an absolute path that a
    /// sync tool carries: the collection's own folder in it (named by its uuid) gets the key
    /// slots that travel and this device's file; the first round writes every item out.
    package static func enable(_ collection: FileCollection, directory: String, syncedFolder: String) throws(CofferError) -> CollectionSync {
        guard syncedFolder.hasPrefix("/") else { throw .invalidArgument("the sync folder must be an absolute path") }
        if let existing = try SyncState.peek(directory: directory, id: collection.id) {
            throw .invalidArgument("collection '\(collection.id.rawValue)' is synced already, through \(existing.folder)")
        }
        let slots = try collection.travelingKeySlots()
        let folder = "\(syncedFolder)/\(Hex.encode(slots.uuid))"
        do {
            try FileSystem.makeDirectories(folder, permissions: 0o700)
        } catch {
            throw .io("cannot create the sync folder \(folder): \(error.reason)")
        }
        try PosixFile.replace("\(folder)/\(keysFileName)", with: slots.encoded())
        return try start(collection, directory: directory, folder: folder)
    }

    /// Joins the synced collection in `folder` (its own folder, holding `collection.keys`) as
    /// the new local collection `id`, opening its keys with `password`; the first round brings
    /// every item in.
    package static func join(folder: String, as id: CollectionID, label: String, password: SecureBytes, store: FileStore,
                             access: CollectionAccess) throws(CofferError) -> CollectionSync {
        guard folder.hasPrefix("/") else { throw .invalidArgument("the sync folder must be an absolute path") }
        let keysPath = "\(folder)/\(keysFileName)"
        guard (try? FileStatus.of(keysPath))?.kind == .regular else {
            throw .invalidArgument("\(folder) holds no synced collection (no \(keysFileName)); give the folder that 'coffer sync enable' made on the first device, named by the collection's uuid")
        }
        let file = try PosixFile(path: keysPath, writable: false)
        let (_, size) = try file.status()
        guard size <= 1 << 16 else { throw .storeCorrupt(file: keysPath, reason: "it is \(size) bytes, far more than key slots take") }
        let slots = try KeySlotsFile.decode(try file.read(at: 0, count: size), file: keysPath)
        let (dataKey, _) = try slots.open(with: .password(password), file: keysPath)
        try slots.verify(dataKey: dataKey, file: keysPath)
        let collection = try store.createJoining(id, label: label, slots: slots, dataKey: dataKey, access: access)
        return try start(collection, directory: store.directory, folder: folder)
    }

    /// Gives the collection its sync state (a new device id) and file, then runs the first round.
    private static func start(_ collection: FileCollection, directory: String, folder: String) throws(CofferError) -> CollectionSync {
        guard let device = DeviceID(Random.bytes(16)) else { throw .io("cannot make a device id") }
        let state = SyncState(uuid: collection.uuid, device: device, folder: folder)
        try SyncDeviceFile(folder: folder, collection: state.uuid, device: device).create()
        try state.write(directory: directory, id: collection.id, keys: try collection.syncKeys())
        let sync = CollectionSync(collection: collection, directory: directory)
        try sync.sync()
        return sync
    }
}
