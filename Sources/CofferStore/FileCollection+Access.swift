import CofferCore
import CofferCrypto

/// A collection's access rules: the sealed part of its meta record (see `AccessCoding`), read
/// once per meta record and rewritten with every meta record (relabels, compaction, recovery).
extension FileCollection {
    public func access() throws(CofferError) -> CollectionAccess {
        try withFreshState { s throws(CofferError) in try access(in: &s) }
    }

    public func updateAccess(_ change: (inout CollectionAccess) throws(CofferError) -> Void) throws(CofferError) -> CollectionAccess {
        try withAppend { s throws(CofferError) in
            var access = try access(in: &s)
            try change(&access)
            // Grants of items deleted since, and expired ones, go; the rest must fit the limit.
            let now = Clock.now()
            access.grants.removeAll { grant in grant.isExpired(at: now) || grant.item.map { s.log.entries[$0] == nil } ?? false }
            guard access.grants.count <= AccessCoding.maxGrants else {
                throw .limitExceeded("collection '\(id)' would have \(access.grants.count) grants, more than the \(AccessCoding.maxGrants) it may keep; revoke some (coffer access revoke) or grant the whole collection instead of single items")
            }
            return (Records(frames: try metaRecord(label: s.log.label, access: access, in: s)), access)
        }
    }

    /// The access rules the current meta record seals (decrypted once per meta record), opened
    /// with `key` (nil: the key of the unlocked collection).
    func access(in s: inout State, key: DataKey? = nil) throws(CofferError) -> CollectionAccess {
        let key = if let key { key } else { try self.key(of: s) }
        // Every collection record was lost to damage (set aside): the rules with it. What a new
        // collection gets stands in for them, never `open`.
        guard let meta = s.log.meta else { return CollectionAccess(policy: .ask) }
        if let cached = s.accessCache, cached.identity == s.identity, cached.offset == meta.offset { return cached.access }
        guard case .frame(let frame) = RecordFrame.parse(s.log.bytes, at: meta.offset, end: s.log.validEnd, checksum: false) else {
            throw .storeCorrupt(file: path, reason: "the collection record cannot be read back")
        }
        let plaintext: SecureBytes
        do throws(CofferError) {
            plaintext = try frame.open(in: s.log.bytes, key: key, uuid: s.log.header.uuid)
        } catch .authenticationFailed {
            throw .storeCorrupt(file: path, reason: "the collection record failed authentication")
        }
        guard let access = AccessCoding.decode(plaintext.unprotectedArray(0..<plaintext.count)) else {
            throw .storeCorrupt(file: path, reason: "the collection's access rules are malformed (written by a newer Coffer?)")
        }
        s.accessCache = (s.identity, meta.offset, access)
        return access
    }

    /// A meta record carrying `label`, `access` and the file's current counters.
    func metaRecord(label: String, access: CollectionAccess, in s: State, header: StoreHeader? = nil,
                    key: DataKey? = nil) throws(CofferError) -> [UInt8] {
        let header = header ?? s.log.header
        let key = if let key { key } else { try self.key(of: s) }
        return try RecordFrame.encode(kind: .meta, endsBatch: true, sequence: 0, timestamp: Clock.now(), itemID: 0,
                                      publicPart: CollectionLog.metaPublicPart(nextItemID: s.log.nextItemID,
                                                                               nextSequence: s.log.nextSequence, label: label,
                                                                               generation: s.log.metaGeneration + 1),
                                      plaintext: try Self.sealable(AccessCoding.encode(access)), key: key,
                                      uuid: header.uuid)
    }

    /// `bytes` in secure memory, as `RecordFrame.encode` seals it.
    static func sealable(_ bytes: [UInt8]) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let out = try SecureBytes(capacity: max(bytes.count, 1))
            try out.append(bytes)
            return out
        }
    }
}
