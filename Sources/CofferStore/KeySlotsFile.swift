import CofferCore
import CofferCrypto
import SystemKit

/// A collection's key slots (see `KeySlot`), in `<id>.keys` beside its file.
///
/// ```
/// "COFFERKS"  magic (8)
/// u16 format version (1)
/// 16  collection uuid
/// u8  number of slots (1 to 16), then each slot
/// 32  HMAC-SHA256 of all of the above, under a key derived from the data key
/// ```
/// The file is replaced whole when a slot is added, removed or sealed anew (written beside and
/// renamed), so such a change costs the same whatever the collection holds, and a password
/// that was replaced opens nothing in the directory from then on. The MAC, checked as soon as
/// a slot has opened the data key, makes a slot that someone without the data key changed,
/// added, removed or swapped in from elsewhere damage, never a way in.
package struct KeySlotsFile: Sendable {
    /// What is wrong with a file that cannot be read.
    struct Malformed: Error {
        let why: String
    }

    static let magic: [UInt8] = Array("COFFERKS".utf8)
    static let formatVersion: UInt16 = 1
    static let maxSlots = 16
    static let fileExtension = ".keys"
    static let macLength = 32

    package let uuid: [UInt8]
    package let slots: [KeySlot]
    private let mac: [UInt8]

    static func path(_ directory: String, _ id: CollectionID) -> String { "\(directory)/\(id.rawValue)\(fileExtension)" }

    /// The file's start, which every slot's seal covers.
    private static func context(uuid: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 26)
        w.raw(magic)
        w.u16(formatVersion)
        w.raw(uuid)
        return w.bytes
    }

    /// `slots` of the collection `uuid`, authenticated under `dataKey`.
    private init(uuid: [UInt8], slots: [KeySlot], dataKey: SecureBytes) throws(CofferError) {
        self.uuid = uuid
        self.slots = slots
        mac = try Self.authenticationCode(of: Self.unauthenticated(uuid: uuid, slots: slots), dataKey: dataKey)
    }

    private init(uuid: [UInt8], slots: [KeySlot], mac: [UInt8]) {
        self.uuid = uuid
        self.slots = slots
        self.mac = mac
    }

    /// A file with one slot, `opener`'s, for a new collection.
    static func first(uuid: [UInt8], dataKey: SecureBytes, opener: KeySlot.Opener, kdf: Argon2Parameters) throws(CofferError) -> KeySlotsFile {
        let slot = try KeySlot.seal(dataKey, id: 1, opener: opener, kdf: kdf, context: context(uuid: uuid))
        return try KeySlotsFile(uuid: uuid, slots: [slot], dataKey: dataKey)
    }

    /// This file with a new slot for `opener` (its id one above every id so far).
    func adding(_ opener: KeySlot.Opener, dataKey: SecureBytes, kdf: Argon2Parameters) throws(CofferError) -> KeySlotsFile {
        guard slots.count < Self.maxSlots else {
            throw .limitExceeded("a collection has at most \(Self.maxSlots) key slots; remove one first ('coffer slots remove')")
        }
        if case .tpm(_, pin: .some, _) = opener, let withPIN = slots.first(where: { $0.tpm?.hasPIN == true }) {
            // Every PIN offered goes to each PIN slot, and each wrong one counts in the TPM's lockout.
            throw .invalidArgument("the collection has a TPM slot with a PIN already (slot \(withPIN.id)); remove it first ('coffer slots remove \(withPIN.id)')")
        }
        let id = (slots.map(\.id).max() ?? 0) + 1
        let slot = try KeySlot.seal(dataKey, id: id, opener: opener, kdf: kdf, context: Self.context(uuid: uuid))
        return try KeySlotsFile(uuid: uuid, slots: slots + [slot], dataKey: dataKey)
    }

    /// This file without slot `id`; the last slot, and the password's, stay.
    func removing(_ id: UInt32, dataKey: SecureBytes) throws(CofferError) -> KeySlotsFile {
        guard let slot = slots.first(where: { $0.id == id }) else {
            throw .invalidArgument("the collection has no key slot \(id); 'coffer slots' lists them")
        }
        guard slot.kind != .password else {
            throw .invalidArgument("slot \(id) holds the collection's password, which cannot be removed; change it with 'coffer passwd'")
        }
        return try KeySlotsFile(uuid: uuid, slots: slots.filter { $0.id != id }, dataKey: dataKey)
    }

    /// This file with its password slot sealed anew for `password` (same id), other slots kept.
    func replacingPassword(with password: SecureBytes, dataKey: SecureBytes, kdf: Argon2Parameters) throws(CofferError) -> KeySlotsFile {
        let id = slots.first { $0.kind == .password }?.id ?? (slots.map(\.id).max() ?? 0) + 1
        let slot = try KeySlot.seal(dataKey, id: id, opener: .password(password), kdf: kdf, context: Self.context(uuid: uuid))
        return try KeySlotsFile(uuid: uuid, slots: slots.filter { $0.kind != .password } + [slot], dataKey: dataKey)
    }

    /// The data key and the slot that opened it, or `authenticationFailed` if no slot of
    /// `opener`'s kind does. The file is not checked yet: see `verify(dataKey:file:)`.
    /// `file` names the file in errors.
    package func open(with opener: KeySlot.Opener, file: String) throws(CofferError) -> (SecureBytes, KeySlot) {
        let context = Self.context(uuid: uuid)
        var refusal: CofferError?
        for slot in slots where slot.kind == opener.kind {
            do throws(CofferError) {
                return (try slot.open(with: opener, context: context), slot)
            } catch .authenticationFailed {
                continue
            } catch .storeCorrupt(_, let reason) {
                throw .storeCorrupt(file: file, reason: reason)
            } catch {
                // A TPM that refuses this slot (another of its kind may open): what the TPM
                // said is told rather than that a slot needs a PIN.
                if case .invalidArgument = refusal ?? .invalidArgument("") { refusal = error }
            }
        }
        throw refusal ?? .authenticationFailed
    }

    /// Throws `storeCorrupt` unless the file is the one `dataKey`'s holder wrote.
    func verify(dataKey: SecureBytes, file: String) throws(CofferError) {
        let expected = try Self.authenticationCode(of: Self.unauthenticated(uuid: uuid, slots: slots), dataKey: dataKey)
        guard expected.count == mac.count, zip(expected, mac).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            throw .storeCorrupt(file: file, reason: "its key slots were changed by someone without the collection's key")
        }
    }

    private static func authenticationCode(of bytes: [UInt8], dataKey: SecureBytes) throws(CofferError) -> [UInt8] {
        try CofferError.catching {
            let key = try HKDF.sha256(inputKeyMaterial: dataKey, salt: nil, info: Array("coffer key slots".utf8), outputLength: 32)
            return try HMAC(key: key).authenticationCode(for: bytes)
        }
    }

    /// Everything the MAC covers.
    private static func unauthenticated(uuid: [UInt8], slots: [KeySlot]) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + slots.count * 140)
        w.raw(context(uuid: uuid))
        w.u8(UInt8(slots.count))
        for slot in slots { slot.encode(into: &w) }
        return w.bytes
    }

    package func encoded() -> [UInt8] { Self.unauthenticated(uuid: uuid, slots: slots) + mac }

    /// Parses a whole file; `storeCorrupt` naming `file` if it is not one.
    package static func decode(_ bytes: [UInt8], file: String) throws(CofferError) -> KeySlotsFile {
        var r = ByteReader(bytes)
        do {
            guard Array(try r.raw(magic.count)) == magic else { throw Malformed(why: "not a Coffer key slots file (bad magic)") }
            let version = try r.u16()
            guard version == formatVersion else { throw Malformed(why: "unsupported format version \(version)") }
            let uuid = Array(try r.raw(16))
            let count = Int(try r.u8())
            guard (1...maxSlots).contains(count) else { throw Malformed(why: "it holds \(count) key slots") }
            var slots: [KeySlot] = []
            for _ in 0..<count { slots.append(try KeySlot.decode(&r)) }
            guard Set(slots.map(\.id)).count == count else { throw Malformed(why: "two key slots have the same id") }
            guard slots.count(where: { $0.kind == .password }) <= 1 else { throw Malformed(why: "it holds two password slots") }
            guard slots.count(where: { $0.tpm?.hasPIN == true }) <= 1 else { throw Malformed(why: "it holds two TPM slots with a PIN") }
            let mac = Array(try r.raw(macLength))
            guard r.remaining == 0 else { throw Malformed(why: "bytes follow its end") }
            return KeySlotsFile(uuid: uuid, slots: slots, mac: mac)
        } catch is ByteReader.Truncated {
            throw .storeCorrupt(file: file, reason: "it is truncated")
        } catch let error as Malformed {
            throw .storeCorrupt(file: file, reason: error.why)
        } catch {
            throw .storeCorrupt(file: file, reason: "\(error)")
        }
    }

    /// The collection's file, or nil when there is none.
    package static func read(directory: String, id: CollectionID) throws(CofferError) -> KeySlotsFile? {
        let path = path(directory, id)
        guard try PosixFile.identity(of: path) != nil else { return nil }
        return try read(path: path)
    }

    /// The keys file at `path` (a collection's, or a synced folder's `collection.keys`).
    static func read(path: String) throws(CofferError) -> KeySlotsFile {
        // A FIFO or a device put in its place would block the open or the read.
        guard let file = try PosixFile.openRegularFile(path) else { throw .storeCorrupt(file: path, reason: "it is not a regular file") }
        let (_, size) = try file.status()
        guard size <= 1 << 16 else { throw .storeCorrupt(file: path, reason: "it is \(size) bytes, far more than key slots take") }
        return try decode(try file.read(at: 0, count: size), file: path)
    }

    /// Replaces the collection's file with this one in one step.
    func write(directory: String, id: CollectionID) throws(CofferError) {
        try PosixFile.replace(Self.path(directory, id), with: encoded())
    }
}
