import CofferCore
import CofferCrypto

/// The sealed part of an item record, built and parsed in secure memory:
/// `u64 created, u64 modified, label, content type, u32 count + (name, value) pairs, secret`
/// and, when the item's creator is known, `creator` (its `Application.encoded` form; items
/// written before creators were recorded end after the secret), each string or byte field a
/// u32 length then the bytes.
package enum ItemPayload {
    package static func encode(_ metadata: ItemMetadata, secret: SecureBytes) throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let out = try SecureBytes(capacity: 64 + metadata.label.utf8.count + secret.count
                                      + metadata.attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 8 })
            try out.appendUInt64LE(metadata.created)
            try out.appendUInt64LE(metadata.modified)
            try appendField(Array(metadata.label.utf8), to: out)
            try appendField(Array(metadata.contentType.utf8), to: out)
            try out.appendUInt32LE(UInt32(metadata.attributes.count))
            for (name, value) in metadata.attributes.sorted(by: { $0.key < $1.key }) {
                try appendField(Array(name.utf8), to: out)
                try appendField(Array(value.utf8), to: out)
            }
            try out.appendUInt32LE(UInt32(secret.count))
            try out.append(secret)
            if let creator = metadata.creator { try appendField(Array(creator.encoded.utf8), to: out) }
            return out
        }
    }

    /// Metadata only (the secret bytes are not copied out).
    package static func metadata(from payload: SecureBytes) throws(CofferError) -> ItemMetadata {
        try decode(payload).metadata
    }

    /// The metadata and a copy of the secret (in secure memory): an item's whole content, as
    /// another device's change carries it.
    package static func item(from payload: SecureBytes) throws(CofferError) -> (ItemMetadata, Secret) {
        let (metadata, range) = try decode(payload)
        let secret = try CofferError.catching { try payload.slice(range) }
        return (metadata, Secret(bytes: secret, contentType: metadata.contentType))
    }

    /// What an item holds that a user can change — its label, attributes, content type and
    /// secret — without its times or creator, which each device keeps its own way: two devices
    /// holding the same item have the same canonical payload.
    package static func canonical(_ payload: SecureBytes) throws(CofferError) -> SecureBytes {
        var (metadata, secret) = try item(from: payload)
        (metadata.created, metadata.modified, metadata.creator) = (0, 0, nil)
        return try encode(metadata, secret: secret.bytes)
    }

    private static func appendField(_ bytes: [UInt8], to out: SecureBytes) throws {
        try out.appendUInt32LE(UInt32(bytes.count))
        try out.append(bytes)
    }

    private struct Malformed: Error {}

    private static func decode(_ p: SecureBytes) throws(CofferError) -> (metadata: ItemMetadata, secretRange: Range<Int>) {
        let (metadata, secretRange) = try parse(p, labelAndAttributes: true)
        return (metadata, secretRange)
    }

    /// The secret and its content type, cut out of `payload` where it lies: the rest of the
    /// payload (label, attributes, creator) is wiped, and no other buffer is made. `payload` is
    /// the secret's from then on.
    package static func secret(cutFrom payload: SecureBytes) throws(CofferError) -> Secret {
        let (metadata, range) = try parse(payload, labelAndAttributes: false)
        payload.truncate(to: range.upperBound)
        payload.removeFirst(range.lowerBound)
        return Secret(bytes: payload, contentType: metadata.contentType)
    }

    /// Walks the payload; without `labelAndAttributes` the label is empty and the attributes
    /// and the creator are skipped.
    private static func parse(_ p: SecureBytes, labelAndAttributes: Bool) throws(CofferError) -> (ItemMetadata, Range<Int>) {
        do {
            return try p.read { r in
                func field() throws -> Range<Int> { try r.skip(Int(try r.u32())) }
                func string() throws -> String { try r.string(Int(try r.u32())) }
                func skipOrRead() throws -> String? {
                    guard labelAndAttributes else {
                        _ = try field()
                        return nil
                    }
                    return try string()
                }
                let created = try r.u64()
                let modified = try r.u64()
                let label = try skipOrRead() ?? ""
                let contentType = try string()
                let count = Int(try r.u32())
                guard count <= Limits.maxAttributes else { throw Malformed() }
                var attributes: Attributes = [:]
                for _ in 0..<count {
                    let name = try skipOrRead()
                    let value = try skipOrRead()
                    if let name, let value { attributes[name] = value }
                }
                let secretRange = try field()
                var creator: Application?
                if !r.isAtEnd {
                    if labelAndAttributes {
                        guard let recorded = Application(encoded: try string()) else { throw Malformed() }
                        creator = recorded
                    } else {
                        _ = try field()
                    }
                }
                guard r.isAtEnd else { throw Malformed() }
                return (ItemMetadata(label: label, attributes: attributes, contentType: contentType,
                                     created: created, modified: modified, creator: creator), secretRange)
            }
        } catch {
            throw .storeCorrupt(file: "item record", reason: "authenticated payload is malformed")
        }
    }
}
