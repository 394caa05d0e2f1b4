import CofferCore
import SystemKit

/// A synced collection's folder as this device reads it: every device's file
/// (`SyncDeviceFile`), read on from where the last read ended, merged item by item
/// (`MergedItem`). A file that is damaged, or that no longer opens under the collection's key
/// (a removed device), is left where it stopped and reported; it never holds up the others.
package struct SyncFolder: Sendable {
    package let path: String
    let collection: [UInt8]
    let keys: SyncKeys

    /// Each item as merged so far.
    package private(set) var items: [SyncItemID: MergedItem] = [:]
    /// How far a device's file was read.
    package struct Position: Sendable {
        /// The generation of the file read (see `SyncDeviceFile`).
        package var generation: UInt32
        /// Bytes read through, and records of this generation read.
        package var end = 0
        package var records: UInt64 = 0
        /// The sequence of the last record read, in this generation.
        package var lastSequence: UInt64?
        /// One more than the sequence of the last change ever read from the device: every
        /// change it made before that has been merged here (what this device's `merged` records
        /// tell; a `merged` record itself moves it not, so two devices' records do not answer
        /// each other for ever).
        package var seen: UInt64 = 0
        /// One more than the greatest sequence ever read from the device, whatever the record:
        /// the sequence of its next record (compaction never lowers it).
        package var nextSequence: UInt64 = 0
    }

    /// How far each device's file was read.
    package private(set) var positions: [DeviceID: Position] = [:]
    /// Each change's sequence in its device's history.
    package private(set) var sequences: [ChangeVersion: UInt64] = [:]
    /// Devices whose files stopped at damage, with what is wrong.
    package private(set) var damaged: [DeviceID: String] = [:]
    /// Which file each damaged one was, and its size then: once it changes (its device made it
    /// anew), it is read again from its start.
    private var damagedFiles: [DeviceID: (FileNode, Int)] = [:]
    /// How far each device says it has merged the others' files (its latest `merged` record).
    package private(set) var mergedBy: [DeviceID: [DeviceID: UInt64]] = [:]
    /// Devices that removed another and moved the collection to another folder (its uuid).
    package private(set) var moves: [DeviceID: (folder: [UInt8], removed: DeviceID)] = [:]
    /// Files a sync tool left as conflicting copies of a device's file: two devices write under
    /// one id (one restored from the other's backup).
    package private(set) var conflictingCopies: [String] = []

    /// How far each device's file had been read before (`SyncState.floors`): a file that holds
    /// less went back, and is set aside.
    let floors: [DeviceID: SyncState.Floor]

    package init(path: String, collection: [UInt8], keys: SyncKeys, floors: [DeviceID: SyncState.Floor] = [:]) {
        self.path = path
        self.collection = collection
        self.keys = keys
        self.floors = floors
    }

    /// Forgets all of `device`'s file (what it read, and that it was damaged): the next refresh
    /// reads it from its start. For this device's own file, once made anew.
    package mutating func forget(_ device: DeviceID) {
        for (item, merged) in items where merged.changes.keys.contains(where: { $0.device == device }) {
            items[item]?.forget(device)
            if items[item]?.changes.isEmpty == true { items[item] = nil }
        }
        sequences = sequences.filter { $0.key.device != device }
        damaged[device] = nil
        damagedFiles[device] = nil
        positions[device] = nil
    }

    /// The device a file name names (`<32 hex digits>.csync`), if any.
    static func device(fileName name: String) -> DeviceID? {
        guard name.hasSuffix(SyncDeviceFile.fileExtension) else { return nil }
        return Hex.decode(String(name.dropLast(SyncDeviceFile.fileExtension.count))).flatMap(DeviceID.init)
    }

    /// The device files in `folder` (no key needed), with when each last changed (seconds
    /// since 1970), by device.
    package static func deviceFiles(in folder: String) -> [(device: DeviceID, changed: UInt64?)] {
        // Regular files only: anything else under such a name is no device's file.
        ((try? FileSystem.names(in: folder)) ?? []).sorted().compactMap { name in
            guard !name.contains(conflictMarker), let device = device(fileName: name),
                  let status = try? FileStatus.of("\(folder)/\(name)", followingLinks: false), status.kind == .regular else { return nil }
            return (device, UInt64(clamping: status.modificationTime.seconds))
        }
    }

    /// The files in `folder` that a sync tool left as conflicting copies of a device's file.
    package static func conflictingCopies(in folder: String) -> [String] {
        ((try? FileSystem.names(in: folder)) ?? []).filter { $0.contains(conflictMarker) }.sorted()
    }

    /// Merges the changes of a sync tool's conflicting copy of a device's file (two devices
    /// writing under one id: one restored from the other's backup), so that neither device's
    /// changes are lost; read whole each time (such copies are few, and reported until the
    /// restored device joins again under an id of its own). A copy that does not open is
    /// left alone.
    private mutating func mergeConflictingCopy(_ name: String) -> Set<SyncItemID> {
        guard let device = DeviceID(Hex.decode(String(name.prefix(32))) ?? []) else { return [] }
        let copy = SyncDeviceFile(path: "\(path)/\(name)", collection: collection, device: device)
        guard let contents = try? copy.read(keys: keys) else { return [] }
        var changed = Set<SyncItemID>()
        for case (_, .change(let change)) in contents.records where change.version.device == device {
            if items[change.item, default: MergedItem(item: change.item)].merge(change) { changed.insert(change.item) }
        }
        return changed
    }

    /// What Syncthing puts in the name of a conflicting copy.
    static let conflictMarker = ".sync-conflict-"

    /// Reads what the device files hold beyond the last read and merges it; returns the items
    /// whose state may have changed.
    package mutating func refresh() throws(CofferError) -> Set<SyncItemID> {
        var changed = Set<SyncItemID>()
        conflictingCopies = []
        let names: [String]
        do {
            names = try FileSystem.names(in: path).sorted()
        } catch {
            throw .io("cannot list the synced folder \(path): \(error.reason)")
        }
        for name in names {
            if name.contains(Self.conflictMarker) {
                conflictingCopies.append(name)
                changed.formUnion(mergeConflictingCopy(name))
                continue
            }
            guard let device = Self.device(fileName: name) else { continue }
            let identity = try PosixFile.identity(of: "\(path)/\(name)")
            if damaged[device] != nil {
                guard let identity, let before = damagedFiles[device], identity != before else { continue }
                forget(device)   // changed since it was set aside: read again from its start
            }
            defer { if damaged[device] != nil, damagedFiles[device] == nil, let identity { damagedFiles[device] = identity } }
            let file = SyncDeviceFile(folder: path, collection: collection, device: device)
            let known = positions[device]
            let contents = try file.read(from: known?.end ?? 0, first: known?.records ?? 0, generation: known?.generation,
                                         after: known?.lastSequence, keys: keys)
            if case .damaged(let why) = contents.problem { damaged[device] = why }
            guard let generation = contents.generation else { continue }
            if known == nil || known?.generation != generation, let floor = floors[device],
               generation < floor.generation || (contents.records.last?.sequence).map({ $0 + 1 }) ?? 0 < floor.nextSequence {
                damaged[device] = "it went back: it holds less than was read from it before (a copy from a backup put back, or someone changed it)"
                continue
            }
            var position = known ?? Position(generation: generation)
            if generation != position.generation {
                guard generation > position.generation else {
                    damaged[device] = "an older generation of it came back (generation \(generation) after \(position.generation))"
                    continue
                }
                // Compacted: what it holds now replaces what it held.
                for (item, merged) in items where merged.changes.keys.contains(where: { $0.device == device }) {
                    items[item]?.forget(device)
                    if items[item]?.changes.isEmpty == true { items[item] = nil }
                    changed.insert(item)
                }
                sequences = sequences.filter { $0.key.device != device }
                position = Position(generation: generation, seen: position.seen, nextSequence: position.nextSequence)
            }
            records: for (sequence, record) in contents.records {
                switch record {
                case .change(let change):
                    guard change.version.device == device else {
                        damaged[device] = "it holds a change made by another device"
                        break records
                    }
                    sequences[change.version] = sequence
                    position.seen = max(position.seen, sequence + 1)
                    if items[change.item, default: MergedItem(item: change.item)].merge(change) { changed.insert(change.item) }
                case .merged(let counts):
                    mergedBy[device] = counts
                case .moved(let folder, let removed):
                    moves[device] = (folder, removed)
                }
            }
            position.end = max(position.end, contents.end)
            position.records += UInt64(contents.records.count)
            if let last = contents.records.last?.sequence {
                position.lastSequence = last
                position.nextSequence = max(position.nextSequence, last + 1)
            }
            positions[device] = position
        }
        return changed
    }
}
