import CofferCore
import CofferCrypto
import SystemKit

/// What this device knows of a synced collection's sync, in `<id>.sync` beside the collection:
/// which folder it syncs through and that folder's key, its device id, its clock, and for each
/// local item that is in the folder, its sync id, the version it was last exported or applied
/// at and a keyed digest of its payload then (so that an export can tell, after any crash,
/// which items changed).
///
/// The folder has a key of its own, which the local collection's key seals here: each device
/// keeps its own collection (its own key, uuid and password: a login collection stays opened
/// by that machine's login password), and joining one to a folder rewrites nothing in it.
///
/// ```
/// "COFFERSS"  magic (8)
/// u16 format version (1)
/// 16  the folder's uuid
/// 16  device id
/// u32 length + the folder's path (UTF-8)
/// then, sealed (12 nonce, AES-256-GCM, tag) under a key derived from the collection's data
/// key, with everything above as associated data:
///   32  the folder key
///   u64 milliseconds, u32 counter        the clock's last reading
///   u32 n, n × (u64 local item, 16 sync id, u64 ms, u32 counter, 16 device, 32 digest)
///   u32 d, d × (16 sync id, u64 ms, u32 counter, 16 device)   items deleted here, at that version
///   u32 f, f × (16 device, u32 generation, u64 next sequence)  how far each device's file was read
/// ```
/// The folder and device id are in clear (`coffer sync status` shows them while locked); the
/// rest needs the collection's key. The file is replaced whole (written beside, renamed).
package struct SyncState: Sendable {
    /// One local item as the folder has it.
    package struct Entry: Equatable, Sendable {
        package var item: SyncItemID
        package var version: ChangeVersion
        package var digest: [UInt8]
    }

    static let magic: [UInt8] = Array("COFFERSS".utf8)
    static let formatVersion: UInt16 = 1
    static let fileExtension = ".sync"

    /// The folder's uuid, which its device files name.
    package let uuid: [UInt8]
    package let device: DeviceID
    /// The collection's folder inside the synced folder: `<synced folder>/<uuid in hex>`.
    package let folder: String
    /// The key the folder's keys (`SyncKeys`) derive from; nil in a state only peeked at.
    package var folderKey: SecureBytes?
    package var clock = HybridLogicalClock()
    package var entries: [ItemID: Entry] = [:]
    /// The items this store holds no more, with the version of their deletion: a version of
    /// one no newer than that is never applied again (a device file rolled back, or lost with
    /// its tombstones, cannot bring a deleted item back).
    package var deleted: [SyncItemID: ChangeVersion] = [:]
    /// How far each device's file had been read when the state was last written: a file that
    /// later holds less (a copy from a backup put back, or tampering) went back, and is set
    /// aside. This device's own next sequence is here too, so a file made anew goes on from it.
    package var floors: [DeviceID: Floor] = [:]

    /// See `floors`.
    package struct Floor: Equatable, Sendable {
        package var generation: UInt32
        package var nextSequence: UInt64
    }

    package init(uuid: [UInt8], device: DeviceID, folder: String, folderKey: SecureBytes?) {
        self.uuid = uuid
        self.device = device
        self.folder = folder
        self.folderKey = folderKey
    }

    static func path(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue)\(fileExtension)" }

    private var header: [UInt8] {
        var w = ByteWriter(capacity: 64 + folder.utf8.count)
        w.raw(Self.magic)
        w.u16(Self.formatVersion)
        w.raw(uuid)
        w.raw(device.bytes)
        w.field(Array(folder.utf8))
        return w.bytes
    }

    /// The file's bytes, the body sealed with `key` (`FileCollection.syncStateKey()`).
    func encoded(key: SecureBytes) throws(CofferError) -> [UInt8] {
        guard let folderKey else { throw .invalidArgument("a sync state without its folder key cannot be written") }
        var w = ByteWriter(capacity: 32 + entries.count * 100)
        w.u64(clock.last.milliseconds)
        w.u32(clock.last.counter)
        w.u32(UInt32(entries.count))
        for (local, entry) in entries.sorted(by: { $0.key < $1.key }) {
            w.u64(local)
            w.raw(entry.item.bytes)
            SyncRecord.encode(entry.version, into: &w)
            w.raw(entry.digest)
        }
        w.u32(UInt32(deleted.count))
        for (item, version) in deleted.sorted(by: { $0.key < $1.key }) {
            w.raw(item.bytes)
            SyncRecord.encode(version, into: &w)
        }
        w.u32(UInt32(floors.count))
        for (device, floor) in floors.sorted(by: { $0.key < $1.key }) {
            w.raw(device.bytes)
            w.u32(floor.generation)
            w.u64(floor.nextSequence)
        }
        let header = header
        let nonce = Random.nonce(AESGCM.nonceLength)
        return try CofferError.catching {
            let body = try SecureBytes(capacity: folderKey.count + w.bytes.count)
            try body.append(folderKey)
            try body.append(w.bytes)
            return header + nonce + (try AESGCM.seal(body, key: key, nonce: nonce, aad: header))
        }
    }

    /// Whether collection `id` is synced (has a state file): one `stat`.
    package static func exists(directory: String, id: CollectionID) -> Bool {
        (try? PosixFile.identity(of: path(directory, id))) != nil
    }

    /// The clear part of a state file: whose it is and where it syncs (no key needed).
    package static func peek(directory: String, id: CollectionID) throws(CofferError) -> SyncState? {
        guard let bytes = try read(directory: directory, id: id) else { return nil }
        return try decodeHeader(bytes, file: path(directory, id)).state
    }

    /// The whole state; `storeCorrupt` when it does not open under `key`.
    package static func load(directory: String, id: CollectionID, key: SecureBytes) throws(CofferError) -> SyncState? {
        let file = path(directory, id)
        guard let bytes = try read(directory: directory, id: id) else { return nil }
        var (state, bodyStart) = try decodeHeader(bytes, file: file)
        let opened: SecureBytes
        do throws(CofferError) {
            let sealed = bytes[bodyStart...]
            opened = try CofferError.catching {
                try AESGCM.open(sealed.dropFirst(AESGCM.nonceLength), key: key, nonce: Array(sealed.prefix(AESGCM.nonceLength)),
                                aad: Array(bytes[..<bodyStart]))
            }
        } catch {
            throw .storeCorrupt(file: file, reason: "it does not open under the collection's key")
        }
        guard opened.count >= AESGCM.keyLength else { throw .storeCorrupt(file: file, reason: "its sealed part is malformed") }
        state.folderKey = try CofferError.catching { try opened.slice(0..<AESGCM.keyLength) }
        // The rest is ids, versions and keyed digests: nothing secret.
        let body = opened.unprotectedArray(AESGCM.keyLength..<opened.count)
        var r = ByteReader(body)
        do {
            state.clock = HybridLogicalClock(last: HLCTimestamp(milliseconds: try r.u64(), counter: try r.u32()))
            for _ in 0..<(try r.u32()) {
                let local = try r.u64()
                guard let item = SyncItemID(Array(try r.raw(16))) else { throw ByteReader.Truncated() }
                let version = try SyncRecord.version(&r)
                state.entries[local] = Entry(item: item, version: version, digest: Array(try r.raw(32)))
            }
            for _ in 0..<(try r.u32()) {
                guard let item = SyncItemID(Array(try r.raw(16))) else { throw ByteReader.Truncated() }
                state.deleted[item] = try SyncRecord.version(&r)
            }
            for _ in 0..<(try r.u32()) {
                guard let device = DeviceID(Array(try r.raw(16))) else { throw ByteReader.Truncated() }
                state.floors[device] = Floor(generation: try r.u32(), nextSequence: try r.u64())
            }
            guard r.remaining == 0 else { throw ByteReader.Truncated() }
        } catch {
            throw .storeCorrupt(file: file, reason: "its sealed part is malformed")
        }
        return state
    }

    /// Replaces the file in one step.
    package func write(directory: String, id: CollectionID, key: SecureBytes) throws(CofferError) {
        try PosixFile.replace(Self.path(directory, id), with: try encoded(key: key))
    }

    private static func read(directory: String, id: CollectionID) throws(CofferError) -> [UInt8]? {
        let path = path(directory, id)
        guard try PosixFile.identity(of: path) != nil else { return nil }
        guard let file = try PosixFile.openRegularFile(path) else { throw .storeCorrupt(file: path, reason: "it is not a regular file") }
        let (_, size) = try file.status()
        guard size <= 1 << 28 else { throw .storeCorrupt(file: path, reason: "it is \(size) bytes, far more than a sync state takes") }
        return try file.read(at: 0, count: size)
    }

    private static func decodeHeader(_ bytes: [UInt8], file: String) throws(CofferError) -> (state: SyncState, bodyStart: Int) {
        var r = ByteReader(bytes)
        do {
            guard Array(try r.raw(magic.count)) == magic else { throw ByteReader.Truncated() }
            guard try r.u16() == formatVersion else { throw ByteReader.Truncated() }
            let uuid = Array(try r.raw(16))
            guard let device = DeviceID(Array(try r.raw(16))) else { throw ByteReader.Truncated() }
            let range = try r.fieldRange()
            guard let folder = String(validating: bytes[range], as: UTF8.self) else { throw ByteReader.Truncated() }
            return (SyncState(uuid: uuid, device: device, folder: folder, folderKey: nil), bytes.count - r.remaining)
        } catch {
            throw .storeCorrupt(file: file, reason: "it is not a Coffer sync state file of this version")
        }
    }
}
