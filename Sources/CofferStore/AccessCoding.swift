import CofferCore

/// A collection's access rules as the sealed part of its meta record holds them (encrypted and
/// authenticated with the data key, so reading or changing them needs the password):
///
/// ```
/// u8  version (2)
/// u8  policy (0 open, 1 ask, 2 strict)
/// u32 count, then per grant:
///     u32+bytes application (Application.encoded)
///     u64 item id (0: the whole collection)
///     u64 granted, u64 expires (0: never)   seconds since the epoch
///     u32+bytes SHA-256 of the executable (empty: any binary at the path)
///     u8  rights (1 read, 2 change, 3 both)   version 2 only; version 1 grants read
/// ```
/// A meta record with an empty sealed part (a collection made before access rules existed)
/// means `CollectionAccess.legacy`.
package enum AccessCoding {
    static let version: UInt8 = 2
    /// The most grants a collection keeps (about 600 KiB of rules, decrypted at each change);
    /// a file with more is damaged.
    static let maxGrants = 10_000
    private static let policies: [AccessPolicy] = [.open, .ask, .strict]

    package static func encode(_ access: CollectionAccess) -> [UInt8] {
        var w = ByteWriter(capacity: 8 + access.grants.count * 64)
        w.u8(version)
        w.u8(UInt8(policies.firstIndex(of: access.policy)!))
        w.u32(UInt32(access.grants.count))
        for grant in access.grants {
            w.field(Array(grant.application.encoded.utf8))
            w.u64(grant.item ?? 0)
            w.u64(grant.granted)
            w.u64(grant.expires ?? 0)
            w.field(grant.executableDigest ?? [])
            w.u8(grant.rights.rawValue)
        }
        return w.bytes
    }

    /// The rules in `bytes`; nil when they are malformed.
    package static func decode(_ bytes: [UInt8]) -> CollectionAccess? {
        guard !bytes.isEmpty else { return .legacy }
        var r = ByteReader(bytes)
        do {
            let format = try r.u8()
            guard format == 1 || format == version else { return nil }
            let policyIndex = Int(try r.u8())
            guard policyIndex < policies.count else { return nil }
            let count = Int(try r.u32())
            guard count <= maxGrants else { return nil }
            var grants: [AccessGrant] = []
            grants.reserveCapacity(count)
            for _ in 0..<count {
                let name = String(decoding: bytes[try r.fieldRange()], as: UTF8.self)
                guard let application = Application(encoded: name) else { return nil }
                let item = try r.u64()
                let granted = try r.u64()
                let expires = try r.u64()
                let digest = Array(bytes[try r.fieldRange()])
                guard digest.isEmpty || digest.count == 32 else { return nil }
                let rights = format == 1 ? AccessRights.read : AccessRights(rawValue: try r.u8())
                guard !rights.isEmpty, AccessRights.all.isSuperset(of: rights), application.isVerified else { return nil }
                grants.append(AccessGrant(application: application, item: item == 0 ? nil : item, rights: rights, granted: granted,
                                          expires: expires == 0 ? nil : expires, executableDigest: digest.isEmpty ? nil : digest))
            }
            guard r.remaining == 0 else { return nil }
            return CollectionAccess(policy: policies[policyIndex], grants: grants)
        } catch {
            return nil
        }
    }
}
