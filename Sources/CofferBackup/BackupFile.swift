import CofferCore
import CofferCrypto

/// The Coffer backup file format (docs/backup-format.md says every byte). All integers are
/// little-endian.
///
/// ```
/// magic      16 bytes  "CofferBackup\n\0\r\n"
/// version    u32       3 (2: before grants said what they allow; 1: before creators and
///                      access rules were kept)
/// argon2id   3 × u32   iterations, memory (KiB), parallelism
/// salt       16 bytes
/// nonce      12 bytes
/// sealed     the rest: AES-256-GCM (key: Argon2id of the passphrase and salt; additional
///            data: every byte before it) of the payload, then the 16-byte tag
/// ```
/// The payload (`BackupPayload`) holds the collections with their items and aliases; from
/// version 2 also each item's creator and each collection's policy and grants, from version 3
/// what each grant allows. A changed byte anywhere fails the tag. Writers write version 3;
/// readers read 1 to 3 and refuse others.
public enum BackupFile {
    /// The version this coffer writes.
    public static let version: UInt32 = 3
    /// The versions this coffer reads.
    public static let readableVersions: ClosedRange<UInt32> = 1...3
    static let magic: [UInt8] = Array("CofferBackup\n\0\r\n".utf8)
    static let saltLength = 16

    /// `backup` sealed with `passphrase`, in the current version.
    public static func write(_ backup: Backup, passphrase: SecureBytes, kdf: Argon2Parameters = .default) throws -> [UInt8] {
        try seal(try BackupPayload.encode(backup), version: version, passphrase: passphrase, kdf: kdf)
    }

    /// `payload` sealed with `passphrase` under a header naming `version`, as `write` does it;
    /// for a payload made by hand (tests of old and forged files).
    static func seal(_ payload: SecureBytes, version: UInt32, passphrase: SecureBytes,
                            kdf: Argon2Parameters = .default) throws -> [UInt8] {
        var header = magic
        for value in [version, kdf.iterations, kdf.memoryKiB, kdf.parallelism] { header += littleEndian(value) }
        let salt = Random.bytes(saltLength)
        let nonce = Random.bytes(AESGCM.nonceLength)
        header += salt + nonce
        let key = try KDF.argon2id(password: passphrase, salt: salt, parameters: kdf)
        return header + (try AESGCM.seal(payload, key: key, nonce: nonce, aad: header))
    }

    /// The backup in `bytes` (any readable version), opened with `passphrase`.
    public static func read(_ bytes: [UInt8], passphrase: SecureBytes) throws -> Backup {
        guard bytes.starts(with: magic) else { throw BackupError.notABackup }
        var offset = magic.count
        func u32() throws -> UInt32 {
            guard offset + 4 <= bytes.count else { throw BackupError.damaged("it ends inside its header") }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        let fileVersion = try u32()
        guard readableVersions.contains(fileVersion) else { throw BackupError.unsupportedVersion(fileVersion) }
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
        return try BackupPayload.read(plain, version: fileVersion)
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}
