import CofferCore
import CofferCrypto

extension BackupPayload {
    /// Reads a payload of version 1, 2 or 3 (see `BackupPayload`) where it lies, through a
    /// `SecureBytesReader`; secrets are copied into secure memory of their own. Anything that
    /// breaks the format is `BackupError.damaged`, saying what and where.
    static func read(_ payload: SecureBytes, version: UInt32) throws -> Backup {
        let parser = Parser(version: version)
        do {
            return try payload.read { r in try parser.backup(&r) }
        } catch is SecureBytesReader.Overrun {
            throw BackupError.damaged("its contents end too early")
        }
    }

    /// The payload's structure, read field by field from the reader each method is handed
    /// (everything it keeps is copied out through the reader).
    private struct Parser {
        let version: UInt32

        func backup(_ r: inout SecureBytesReader) throws -> Backup {
            var collections: [Backup.Collection] = []
            for _ in 0..<(try r.u32()) {
                collections.append(try collection(&r))
            }
            var aliases: [String: CollectionID] = [:]
            for _ in 0..<(try r.u32()) { aliases[try text(&r)] = try id(&r) }
            guard r.isAtEnd else { throw BackupError.damaged("unexpected data after its contents") }
            return Backup(collections: collections, aliases: aliases)
        }

        private func collection(_ r: inout SecureBytesReader) throws -> Backup.Collection {
            let id = try id(&r)
            let label = try text(&r)
            let created = try r.u64(), modified = try r.u64()
            var items: [Backup.Item] = []
            for _ in 0..<(try r.u32()) {
                items.append(try item(&r, in: id))
            }
            guard version >= 2 else {
                return Backup.Collection(id: id, label: label, created: created, modified: modified, items: items, policy: nil)
            }
            let policyName = try text(&r)
            let policy = AccessPolicy(rawValue: policyName)
            guard policy != nil || policyName.isEmpty else {
                throw BackupError.damaged("collection '\(id)' has the unknown access policy '\(policyName)' (open, ask, strict or none expected)")
            }
            var grants: [Backup.Grant] = []
            for _ in 0..<(try r.u32()) {
                grants.append(try grant(&r, in: id, itemCount: items.count))
            }
            return Backup.Collection(id: id, label: label, created: created, modified: modified, items: items,
                                     policy: policy, grants: grants)
        }

        private func item(_ r: inout SecureBytesReader, in collection: CollectionID) throws -> Backup.Item {
            let label = try text(&r)
            var attributes: [String: String] = [:]
            for _ in 0..<(try r.u32()) { attributes[try text(&r)] = try text(&r) }
            let contentType = try text(&r)
            let secret = Secret(bytes: try r.secureBytes(Int(try r.u32())), contentType: contentType)
            let created = try r.u64(), modified = try r.u64()
            var creator: Application?
            if version >= 2 {
                let name = try text(&r)
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

        private func grant(_ r: inout SecureBytesReader, in collection: CollectionID, itemCount: Int) throws -> Backup.Grant {
            let what = "a grant of collection '\(collection)'"
            guard let application = Application(encoded: try text(&r)) else {
                throw BackupError.damaged("\(what) names an invalid application")
            }
            guard application.isVerified else {
                throw BackupError.damaged("\(what) names an unverified process, which no grant may name")
            }
            let position = try r.u32()
            guard position == wholeCollection || Int(position) < itemCount else {
                throw BackupError.damaged("\(what) points at item \(position), but the collection has \(itemCount) items")
            }
            let granted = try r.u64()
            let expiring = try r.u8()
            let expires = try r.u64()
            guard expiring == 1 || (expiring == 0 && expires == 0) else {
                throw BackupError.damaged("\(what) has a malformed expiry")
            }
            let digest = try field(&r)
            guard digest.isEmpty || digest.count == digestLength else {
                throw BackupError.damaged("\(what) has a \(digest.count)-byte executable digest, not a \(digestLength)-byte SHA-256")
            }
            let rights = version >= 3 ? AccessRights(rawValue: try r.u8()) : .read
            guard !rights.isEmpty, AccessRights.all.isSuperset(of: rights) else {
                throw BackupError.damaged("\(what) allows nothing Coffer knows (rights \(rights.rawValue))")
            }
            return Backup.Grant(application: application, item: position == wholeCollection ? nil : Int(position),
                                rights: rights, granted: granted, expires: expiring == 1 ? expires : nil,
                                executableDigest: digest.isEmpty ? nil : digest)
        }

        /// The next length-prefixed field, in ordinary memory (never a secret).
        private func field(_ r: inout SecureBytesReader) throws -> [UInt8] {
            try r.unprotectedBytes(Int(try r.u32()))
        }

        /// A length-prefixed field that must be UTF-8 text (never a secret).
        private func text(_ r: inout SecureBytesReader) throws -> String {
            guard let text = String(validating: try field(&r), as: UTF8.self) else {
                throw BackupError.damaged("it holds text that is not UTF-8")
            }
            return text
        }

        private func id(_ r: inout SecureBytesReader) throws -> CollectionID {
            guard let id = CollectionID(try text(&r)) else { throw BackupError.damaged("it names a collection with an invalid id") }
            return id
        }
    }
}
