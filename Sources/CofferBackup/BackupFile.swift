import CofferCore
import CofferCrypto

/// The Coffer backup file format, version 1 (docs/backup-format.md). All integers little-endian.
///
/// ```
/// magic      16 bytes  "CofferBackup\n\0\r\n"
/// version    u32       1
/// argon2id   3 × u32   iterations, memory (KiB), parallelism
/// salt       16 bytes
/// nonce      12 bytes
/// sealed     the rest: AES-256-GCM (key: Argon2id of the passphrase and salt; additional
///            data: every byte before it) of the payload, then the 16-byte tag
///
/// payload:
///   u32 collections, each: string id, string label, u64 created, u64 modified,
///       u32 items, each: string label, u32 attributes (string name, string value),
///                        string content type, bytes secret, u64 created, u64 modified
///   u32 aliases, each: string name, string collection id
/// string/bytes: u32 length, then that many bytes (strings are UTF-8)
/// ```
/// A changed byte anywhere fails the tag; a reader of version 1 refuses other versions.
public enum BackupFile {
    public static let version: UInt32 = 1
    static let magic: [UInt8] = Array("CofferBackup\n\0\r\n".utf8)
    static let saltLength = 16

    /// `backup` sealed with `passphrase`.
    public static func write(_ backup: Backup, passphrase: SecureBytes, kdf: Argon2Parameters = .default) throws -> [UInt8] {
        var header = magic
        for value in [version, kdf.iterations, kdf.memoryKiB, kdf.parallelism] { header += littleEndian(value) }
        let salt = Random.bytes(saltLength)
        let nonce = Random.bytes(AESGCM.nonceLength)
        header += salt + nonce
        let key = try KDF.argon2id(password: passphrase, salt: salt, parameters: kdf)
        return header + (try AESGCM.seal(try payload(backup), key: key, nonce: nonce, aad: header))
    }

    /// The backup in `bytes`, opened with `passphrase`.
    public static func read(_ bytes: [UInt8], passphrase: SecureBytes) throws -> Backup {
        guard bytes.starts(with: magic) else { throw BackupError.notABackup }
        var offset = magic.count
        func u32() throws -> UInt32 {
            guard offset + 4 <= bytes.count else { throw BackupError.damaged("it ends inside its header") }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        let fileVersion = try u32()
        guard fileVersion == version else { throw BackupError.unsupportedVersion(fileVersion) }
        let kdf = Argon2Parameters(iterations: try u32(), memoryKiB: try u32(), parallelism: try u32())
        guard kdf.isAcceptableFromFile else {
            throw BackupError.damaged("its key derivation parameters are out of range")
        }
        let headerLength = offset + saltLength + AESGCM.nonceLength
        guard bytes.count >= headerLength + AESGCM.tagLength else { throw BackupError.damaged("it ends inside its header") }
        let salt = Array(bytes[offset..<offset + saltLength])
        let nonce = Array(bytes[offset + saltLength..<headerLength])
        let key = try KDF.argon2id(password: passphrase, salt: salt, parameters: kdf)
        let plain: SecureBytes
        do {
            plain = try AESGCM.open(bytes[headerLength...], key: key, nonce: nonce, aad: Array(bytes[..<headerLength]))
        } catch CryptoError.authenticationFailed {
            throw BackupError.wrongPassphrase
        }
        var reader = PayloadReader(plain)
        return try reader.backup()
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    private static func payload(_ backup: Backup) throws -> SecureBytes {
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
            }
        }
        try out.appendUInt32LE(UInt32(backup.aliases.count))
        for (name, id) in backup.aliases.sorted(by: { $0.key < $1.key }) {
            try string(name)
            try string(id.rawValue)
        }
        return out
    }
}

/// Reads a payload (see `BackupFile`); secrets stay in secure memory.
private struct PayloadReader {
    let bytes: SecureBytes
    var offset = 0

    init(_ bytes: SecureBytes) { self.bytes = bytes }

    private mutating func need(_ n: Int) throws {
        guard n >= 0, n <= bytes.count - offset else { throw BackupError.damaged("its contents end too early") }
    }

    mutating func u32() throws -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return bytes.readUInt32LE(at: offset)
    }

    mutating func u64() throws -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return bytes.readUInt64LE(at: offset)
    }

    mutating func string() throws -> String {
        let n = Int(try u32())
        try need(n)
        defer { offset += n }
        guard let text = String(validating: bytes.unprotectedArray(offset..<offset + n), as: UTF8.self) else {
            throw BackupError.damaged("it holds text that is not UTF-8")
        }
        return text
    }

    mutating func secret() throws -> SecureBytes {
        let n = Int(try u32())
        try need(n)
        defer { offset += n }
        return try bytes.slice(offset..<offset + n)
    }

    mutating func id() throws -> CollectionID {
        guard let id = CollectionID(try string()) else { throw BackupError.damaged("it names a collection with an invalid id") }
        return id
    }

    mutating func backup() throws -> Backup {
        var collections: [Backup.Collection] = []
        for _ in 0..<(try u32()) {
            let id = try id()
            let label = try string()
            let created = try u64(), modified = try u64()
            var items: [Backup.Item] = []
            for _ in 0..<(try u32()) {
                let label = try string()
                var attributes: [String: String] = [:]
                for _ in 0..<(try u32()) { attributes[try string()] = try string() }
                let contentType = try string()
                let secret = Secret(bytes: try secret(), contentType: contentType)
                items.append(Backup.Item(label: label, attributes: attributes, secret: secret, created: try u64(), modified: try u64()))
            }
            collections.append(Backup.Collection(id: id, label: label, created: created, modified: modified, items: items))
        }
        var aliases: [String: CollectionID] = [:]
        for _ in 0..<(try u32()) { aliases[try string()] = try id() }
        guard offset == bytes.count else { throw BackupError.damaged("unexpected data after its contents") }
        return Backup(collections: collections, aliases: aliases)
    }
}
