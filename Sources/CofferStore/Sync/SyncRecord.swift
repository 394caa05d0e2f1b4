import CofferCore

/// What one record of a device file says (inside its seal): a change of an item, or how far
/// that device has merged the other devices' files (which lets every device know when a
/// superseded version has been seen everywhere).
///
/// ```
/// u8 kind
/// 1 change: 16 item, version, u32 n + n versions it replaces,
///           u8 content (1 item: u32+bytes sealed content, 2 deleted)
/// 2 merged: u32 n + n × (16 device, u64 records of its file merged)
/// 3 moved:  16 uuid of the folder the collection moved to, 16 device removed
/// version: u64 milliseconds, u32 counter, 16 device
/// ```
/// Its plain text holds no label, attribute or secret: an item's content stays sealed by
/// `SyncKeys.sealContent`.
package enum SyncRecord: Hashable, Sendable {
    case change(SyncChange)
    case merged([DeviceID: UInt64])
    /// The writer removed a device: the collection now syncs through another folder (of the
    /// same synced folder), under a new key that only the new sync password opens. A notice
    /// for the other devices, which the removed one can read too: never followed by itself.
    case moved(folder: [UInt8], removed: DeviceID)

    /// Why bytes are not a record (its seal opened, so this is a writer's fault, or a newer
    /// format).
    struct Malformed: Error {
        let why: String
    }

    package func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        switch self {
        case .change(let change):
            w.u8(1)
            w.raw(change.item.bytes)
            Self.encode(change.version, into: &w)
            w.u32(UInt32(change.replaces.count))
            for version in change.replaces.sorted() { Self.encode(version, into: &w) }
            switch change.content {
            case .item(let sealed):
                w.u8(1)
                w.field(sealed)
            case .deleted:
                w.u8(2)
            }
        case .merged(let counts):
            w.u8(2)
            w.u32(UInt32(counts.count))
            for (device, count) in counts.sorted(by: { $0.key < $1.key }) {
                w.raw(device.bytes)
                w.u64(count)
            }
        case .moved(let folder, let removed):
            w.u8(3)
            w.raw(folder)
            w.raw(removed.bytes)
        }
        return w.bytes
    }

    static func encode(_ version: ChangeVersion, into w: inout ByteWriter) {
        w.u64(version.timestamp.milliseconds)
        w.u32(version.timestamp.counter)
        w.raw(version.device.bytes)
    }

    package init(decoding bytes: [UInt8]) throws(CofferError) {
        var r = ByteReader(bytes)
        do {
            switch try r.u8() {
            case 1:
                guard let item = SyncItemID(Array(try r.raw(16))) else { throw Malformed(why: "an item id") }
                let version = try Self.version(&r)
                var replaces = Set<ChangeVersion>()
                for _ in 0..<(try r.u32()) { replaces.insert(try Self.version(&r)) }
                let content: SyncChange.Content
                switch try r.u8() {
                case 1: content = .item(Array(r.bytes[try r.fieldRange()]))
                case 2: content = .deleted
                case let other: throw Malformed(why: "content of kind \(other)")
                }
                self = .change(SyncChange(item: item, version: version, replaces: replaces, content: content))
            case 2:
                var counts: [DeviceID: UInt64] = [:]
                for _ in 0..<(try r.u32()) {
                    guard let device = DeviceID(Array(try r.raw(16))) else { throw Malformed(why: "a device id") }
                    counts[device] = try r.u64()
                }
                self = .merged(counts)
            case 3:
                let folder = Array(try r.raw(16))
                guard let removed = DeviceID(Array(try r.raw(16))) else { throw Malformed(why: "a device id") }
                self = .moved(folder: folder, removed: removed)
            case let other:
                throw Malformed(why: "a record of kind \(other)")
            }
            guard r.remaining == 0 else { throw Malformed(why: "bytes after its end") }
        } catch is ByteReader.Truncated {
            throw .invalidArgument("a sync record ends early")
        } catch let error as Malformed {
            throw .invalidArgument("a sync record is malformed: \(error.why)")
        } catch {
            throw .invalidArgument("a sync record is malformed: \(error)")
        }
    }

    static func version(_ r: inout ByteReader) throws -> ChangeVersion {
        let milliseconds = try r.u64()
        let counter = try r.u32()
        guard let device = DeviceID(Array(try r.raw(16))) else { throw Malformed(why: "a device id") }
        return ChangeVersion(timestamp: HLCTimestamp(milliseconds: milliseconds, counter: counter), device: device)
    }
}
