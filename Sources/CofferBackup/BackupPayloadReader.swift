import CofferCore
import CofferCrypto

extension BackupPayload {
    /// Reads a payload of version 1 or 2 (see `BackupPayload`); secrets stay in secure memory.
    /// Anything that breaks the format is `BackupError.damaged`, saying what and where.
    struct Reader {
        let bytes: SecureBytes
        let version: UInt32
        var offset = 0

        init(_ bytes: SecureBytes, version: UInt32) {
            self.bytes = bytes
            self.version = version
        }

        private mutating func need(_ n: Int) throws {
            guard n >= 0, n <= bytes.count - offset else { throw BackupError.damaged("its contents end too early") }
        }

        mutating func u8() throws -> UInt8 {
            try need(1)
            defer { offset += 1 }
            return bytes[offset]
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
            guard let text = String(validating: try field(), as: UTF8.self) else {
                throw BackupError.damaged("it holds text that is not UTF-8")
            }
            return text
        }

        /// A length-prefixed field outside secure memory (not for secrets).
        mutating func field() throws -> [UInt8] {
            let n = Int(try u32())
            try need(n)
            defer { offset += n }
            return bytes.unprotectedArray(offset..<offset + n)
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
                collections.append(try collection())
            }
            var aliases: [String: CollectionID] = [:]
            for _ in 0..<(try u32()) { aliases[try string()] = try id() }
            guard offset == bytes.count else { throw BackupError.damaged("unexpected data after its contents") }
            return Backup(collections: collections, aliases: aliases)
        }

        private mutating func collection() throws -> Backup.Collection {
            let id = try id()
            let label = try string()
            let created = try u64(), modified = try u64()
            var items: [Backup.Item] = []
            for _ in 0..<(try u32()) {
                items.append(try item(in: id))
            }
            guard version >= 2 else {
                return Backup.Collection(id: id, label: label, created: created, modified: modified, items: items, policy: nil)
            }
            let policyName = try string()
            let policy = AccessPolicy(rawValue: policyName)
            guard policy != nil || policyName.isEmpty else {
                throw BackupError.damaged("collection '\(id)' has the unknown access policy '\(policyName)' (open, ask, strict or none expected)")
            }
            var grants: [Backup.Grant] = []
            for _ in 0..<(try u32()) {
                grants.append(try grant(in: id, itemCount: items.count))
            }
            return Backup.Collection(id: id, label: label, created: created, modified: modified, items: items,
                                     policy: policy, grants: grants)
        }

        private mutating func item(in collection: CollectionID) throws -> Backup.Item {
            let label = try string()
            var attributes: [String: String] = [:]
            for _ in 0..<(try u32()) { attributes[try string()] = try string() }
            let contentType = try string()
            let secret = Secret(bytes: try secret(), contentType: contentType)
            let created = try u64(), modified = try u64()
            var creator: Application?
            if version >= 2 {
                let name = try string()
                if !name.isEmpty {
                    guard let application = Application(encoded: name) else {
                        throw BackupError.damaged("an item of collection '\(collection)' names an invalid creator")
                    }
                    creator = application
                }
            }
            return Backup.Item(label: label, attributes: attributes, secret: secret, created: created, modified: modified,
                               creator: creator)
        }

        private mutating func grant(in collection: CollectionID, itemCount: Int) throws -> Backup.Grant {
            let what = "a grant of collection '\(collection)'"
            guard let application = Application(encoded: try string()) else {
                throw BackupError.damaged("\(what) names an invalid application")
            }
            let position = try u32()
            guard position == wholeCollection || Int(position) < itemCount else {
                throw BackupError.damaged("\(what) points at item \(position), but the collection has \(itemCount) items")
            }
            let granted = try u64()
            let expiring = try u8()
            let expires = try u64()
            guard expiring == 1 || (expiring == 0 && expires == 0) else {
                throw BackupError.damaged("\(what) has a malformed expiry")
            }
            let digest = try field()
            guard digest.isEmpty || digest.count == digestLength else {
                throw BackupError.damaged("\(what) has a \(digest.count)-byte executable digest, not a \(digestLength)-byte SHA-256")
            }
            return Backup.Grant(application: application, item: position == wholeCollection ? nil : Int(position),
                                granted: granted, expires: expiring == 1 ? expires : nil,
                                executableDigest: digest.isEmpty ? nil : digest)
        }
    }
}
