import CofferCore
import CofferCrypto

/// The sealed payload of a backup file, version 3 (docs/backup-format.md):
///
/// ```
/// u32 collections, each:
///     string id, string label, u64 created, u64 modified,
///     u32 items, each:
///         string label, u32 attributes (string name, string value),
///         string content type, bytes secret, u64 created, u64 modified,
///         string creator                 Application.encoded; empty: unknown
///     string policy                      "open", "ask" or "strict"; empty: not recorded
///     u32 grants, each:
///         string application             Application.encoded
///         u32 item                       position in this collection's items; 0xFFFFFFFF: all
///         u64 granted, u8 expiring (0 or 1), u64 expires (0 unless expiring)
///         bytes executable digest        empty, or the 32-byte SHA-256
///         u8 rights                      1 read, 2 change, 3 both (version 3 only)
/// u32 aliases, each: string name, string collection id
/// string/bytes: u32 length, then that many bytes (strings are UTF-8)
/// ```
/// Version 2 is the same without the rights (its grants allow reading); version 1 also without
/// the creator, policy and grants (creators unknown, policy not recorded, no grants).
enum BackupPayload {
    /// The `item` of a grant for the whole collection.
    static let wholeCollection = UInt32.max
    static let digestLength = 32

    /// `backup` as a version 3 payload, in secure memory (it holds the secrets).
    static func encode(_ backup: Backup) throws -> SecureBytes {
        let out = try SecureBytes(capacity: 4096)
        func string(_ text: String) throws {
            try out.appendUInt32LE(UInt32(text.utf8.count))
            try out.append(Array(text.utf8))
        }
        try out.appendUInt32LE(UInt32(backup.collections.count))
        for collection in backup.collections {
            try string(collection.id.rawValue)
            try string(collection.label)
            try out.appendUInt64LE(collection.created)
            try out.appendUInt64LE(collection.modified)
            try out.appendUInt32LE(UInt32(collection.items.count))
            for item in collection.items {
                try string(item.label)
                try out.appendUInt32LE(UInt32(item.attributes.count))
                for (name, value) in item.attributes.sorted(by: { $0.key < $1.key }) {
                    try string(name)
                    try string(value)
                }
                try string(item.secret.contentType)
                try out.appendUInt32LE(UInt32(item.secret.bytes.count))
                try out.append(item.secret.bytes)
                try out.appendUInt64LE(item.created)
                try out.appendUInt64LE(item.modified)
                try string(item.creator?.encoded ?? "")
            }
            try string(collection.policy?.rawValue ?? "")
            try out.appendUInt32LE(UInt32(collection.grants.count))
            for grant in collection.grants {
                try check(grant, in: collection)
                try string(grant.application.encoded)
                try out.appendUInt32LE(grant.item.map { UInt32($0) } ?? wholeCollection)
                try out.appendUInt64LE(grant.granted)
                try out.append(grant.expires == nil ? 0 : 1)
                try out.appendUInt64LE(grant.expires ?? 0)
                let digest = grant.executableDigest ?? []
                try out.appendUInt32LE(UInt32(digest.count))
                try out.append(digest)
                try out.append(grant.rights.rawValue)
            }
        }
        try out.appendUInt32LE(UInt32(backup.aliases.count))
        for (name, id) in backup.aliases.sorted(by: { $0.key < $1.key }) {
            try string(name)
            try string(id.rawValue)
        }
        return out
    }

    /// Refuses a grant the reader would refuse, so that nothing is written that cannot be read.
    private static func check(_ grant: Backup.Grant, in collection: Backup.Collection) throws {
        if let item = grant.item, !collection.items.indices.contains(item) {
            throw BackupError.inconsistent("a grant of collection '\(collection.id)' points at item \(item), but it has \(collection.items.count) items")
        }
        if let digest = grant.executableDigest, digest.count != digestLength {
            throw BackupError.inconsistent("a grant of collection '\(collection.id)' has a \(digest.count)-byte executable digest, not a \(digestLength)-byte SHA-256")
        }
    }
}
