@testable import CofferBackup
import CofferCrypto

/// Builds a backup payload byte by byte as docs/backup-format.md describes it (not through the
/// writer), to check the reader against the document and to forge fields no writer makes.
struct PayloadBuilder {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    mutating func u64(_ value: UInt64) { bytes += (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    mutating func field(_ value: [UInt8]) {
        u32(UInt32(value.count))
        bytes += value
    }
    mutating func string(_ value: String) { field(Array(value.utf8)) }

    /// One grant, each field as given.
    mutating func grant(application: String = "flatpak:org.gnome.Fractal", item: UInt32 = 0, granted: UInt64 = 100,
                        expiring: UInt8 = 1, expires: UInt64 = 200, digest: [UInt8] = []) {
        string(application)
        u32(item)
        u64(granted)
        u8(expiring)
        u64(expires)
        field(digest)
    }

    /// A version 2 payload: collection `login` ("Login", times 1 and 2) with two items, "a"
    /// (created by `creator`) and "b" (creator unknown), then `policy` and the grants `grants`
    /// writes (`count` of them), and the alias `default` naming `login`.
    static func version2(creator: String = "exe:/usr/bin/git", policy: String = "strict", count: UInt32 = 1,
                         grants: (inout PayloadBuilder) -> Void = { $0.grant() }) -> PayloadBuilder {
        var b = PayloadBuilder()
        b.u32(1)
        b.string("login"); b.string("Login"); b.u64(1); b.u64(2)
        b.u32(2)
        b.string("a"); b.u32(1); b.string("service"); b.string("git"); b.string("text/plain"); b.string("secret a")
        b.u64(3); b.u64(4); b.string(creator)
        b.string("b"); b.u32(0); b.string("text/plain"); b.string("secret b")
        b.u64(5); b.u64(6); b.string("")
        b.string(policy)
        b.u32(count)
        grants(&b)
        b.u32(1)
        b.string("default"); b.string("login")
        return b
    }

    /// A version 1 payload: collection `login` ("Login", times 1 and 2) with one item, "a",
    /// and no aliases (version 1 has no policy, grants or creators).
    static func version1() -> PayloadBuilder {
        var b = PayloadBuilder()
        b.u32(1)
        b.string("login"); b.string("Login"); b.u64(1); b.u64(2)
        b.u32(1)
        b.string("a"); b.u32(0); b.string("text/plain"); b.string("secret"); b.u64(3); b.u64(4)
        b.u32(0)
        return b
    }

    /// The payload sealed in a file of `version` with the passphrase "forged".
    func file(version: UInt32 = 2) throws -> [UInt8] {
        try BackupFile.seal(try SecureBytes(bytes), version: version, passphrase: try SecureBytes(Array("forged".utf8)), kdf: .testing)
    }

    /// The payload read back as a file of `version`.
    func read(version: UInt32 = 2) throws -> Backup {
        try BackupFile.read(try file(version: version), passphrase: try SecureBytes(Array("forged".utf8)))
    }
}
