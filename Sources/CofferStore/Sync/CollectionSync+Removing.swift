import CofferCore
import CofferCrypto
import SystemKit

/// Removing a device: the collection moves to a new folder under a new key, which only a new
/// sync password opens, so the removed device reads nothing changed from then on (what it
/// already had, it keeps). The other devices learn of the move from a notice in the old folder
/// and join the new one with the new password.
extension CollectionSync {
    /// Removes `removed` (a device id as `coffer sync status` shows it, or a unique start of
    /// one): a new folder beside the old one, with a new folder key sealed by `newPassword`;
    /// a notice in the old folder; this device syncing through the new folder under a new
    /// device id from then on, every item written there. Returns the new folder.
    package func removeDevice(_ removed: String, newPassword: SecureBytes) throws(CofferError) -> String {
        let folder = try withSession { s throws(CofferError) -> String in
            _ = try read(&s)
            let known = Set(SyncFolder.deviceFiles(in: s.state.folder).map(\.device)).union(s.folder.positions.keys)
            let matches = known.filter { "\($0)".hasPrefix(removed.lowercased()) }
            guard removed.count >= 8, matches.count == 1, let device = matches.first else {
                throw .invalidArgument(matches.count > 1 ? "'\(removed)' is the start of several machines' ids; give more of it"
                                       : "no machine '\(removed)' syncs collection '\(id.rawValue)' (give 8 characters of its id at least); 'coffer sync status' lists them")
            }
            guard device != s.state.device else {
                throw .invalidArgument("'\(removed)' is this machine; remove it from another machine, or stop syncing here")
            }
            let parent = String(s.state.folder[..<(s.state.folder.lastIndex(of: "/") ?? s.state.folder.startIndex)])
            let (folder, uuid, newKey) = try Self.makeFolder(in: parent, password: newPassword, kdf: collection.kdf)
            guard let newDevice = DeviceID(Random.bytes(16)) else { throw .io("cannot make a device id") }
            var state = SyncState(uuid: uuid, device: newDevice, folder: folder, folderKey: newKey)
            state.clock = s.state.clock
            try SyncDeviceFile(folder: folder, collection: uuid, device: newDevice).create()
            // The notice goes out before this device leaves: a crash between the two leaves it
            // syncing through the old folder, with the notice telling the others (and it) where to go.
            try appendOwn([.moved(folder: uuid, removed: device)], &s)
            try state.write(directory: directory, id: id, key: s.stateKey)
            return folder
        }
        reset()   // the next round starts from the new state: every item goes out there
        try sync()
        return folder
    }

    /// What the moves others announced tell this device to do.
    func moveNotices(of s: Session) -> [String] {
        s.folder.moves.sorted { $0.key < $1.key }.map { mover, move in
            let parent = String(s.state.folder[..<(s.state.folder.lastIndex(of: "/") ?? s.state.folder.startIndex)])
            return "machine \(mover) removed machine \(move.removed) and moved this collection's sync to \(parent)/\(Hex.encode(move.folder)), under a new sync password; join it there: coffer sync join \(parent)/\(Hex.encode(move.folder)) --collection \(id.rawValue)"
        }
    }
}
