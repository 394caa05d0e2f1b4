import CofferCrypto

/// gnome-keyring's encrypted binary format (§12.2–12.4 of the spec digest): a clear header
/// with the items' ids and hashed attributes, then one AES-128-CBC block holding every item,
/// checked by an MD5 of its plaintext.
enum BinaryKeyringReader {
    static let magic: [UInt8] = Array("GnomeKeyring\n\r\0\n".utf8)

    /// Whether `bytes` start like a binary keyring (any version).
    static func looksBinary(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// The header's fields that locate and unlock the encrypted part.
    struct Header {
        var label: String
        var times: (UInt64, UInt64)
        var iterations: UInt32
        var salt: [UInt8]
        /// Item ids in file order, with each item's legacy type.
        var items: [(id: UInt32, type: UInt32)]
        var encrypted: ArraySlice<UInt8>
    }

    static func header(_ bytes: [UInt8]) throws(GnomeKeyringFileError) -> Header {
        var reader = ByteReader(bytes, offset: magic.count)
        let version = try reader.bytes(4, "the version")
        guard version == [0, 0, 0, 0] else {
            throw .unsupportedFormat("version \(version[0]).\(version[1]) with cipher \(version[2]) and hash \(version[3]) (only 0.0 with AES-128 and MD5 is gnome-keyring's)")
        }
        let label = try reader.string("the label") ?? ""
        let times = (try reader.time("the creation time"), try reader.time("the modification time"))
        try reader.skip(8, "the lock settings")
        let iterations = try reader.uint32("the hash iterations")
        guard iterations >= 1 else { throw .damaged("the key derivation has 0 iterations") }
        let salt = try reader.bytes(8, "the salt")
        try reader.skip(16, "the reserved fields")
        let count = try reader.uint32("the number of items")
        var items: [(id: UInt32, type: UInt32)] = []
        for n in 0..<count {
            reader.context = "item \(n + 1) of \(count) in the header"
            let id = try reader.uint32("the id")
            let type = try reader.uint32("the type")
            let attributes = try reader.uint32("the number of attributes")
            for _ in 0..<attributes {
                _ = try reader.string("an attribute name")
                switch try reader.uint32("an attribute kind") {
                case 0: _ = try reader.string("a hashed attribute value")
                case 1: _ = try reader.uint32("a hashed attribute value")
                case let kind: throw .damaged("\(reader.context) has an attribute of unknown kind \(kind)")
                }
            }
            items.append((id, type))
        }
        reader.context = "the encrypted part"
        let length = Int(try reader.uint32("its length"))
        guard length % 16 == 0 else { throw .damaged("the encrypted part is \(length) bytes, not a whole number of blocks") }
        guard length == reader.remaining else {
            throw .damaged("the encrypted part should be \(length) bytes, and \(reader.remaining) follow")
        }
        return Header(label: label, times: times, iterations: iterations, salt: salt, items: items,
                      encrypted: bytes[reader.offset...])
    }

    static func read(_ bytes: [UInt8], password: SecureBytes) throws(GnomeKeyringFileError) -> GnomeKeyring {
        let header = try header(bytes)
        let plaintext = try decrypt(header, password: password)
        var reader = ByteReader(plaintext, offset: 16)
        var items: [GnomeKeyring.Item] = []
        for (n, (id, type)) in header.items.enumerated() {
            reader.context = "item \(n + 1) of \(header.items.count)"
            items.append(try item(&reader, id: id, type: type))
        }
        guard (0..<reader.remaining).allSatisfy({ plaintext[reader.offset + $0] == 0 }) else {
            throw .damaged("unexpected data after the last item")
        }
        return GnomeKeyring(label: header.label, created: min(header.times.0, header.times.1),
                            modified: max(header.times.0, header.times.1), items: items)
    }

    /// The encrypted part, decrypted and checked: its first 16 bytes are the MD5 of the rest.
    private static func decrypt(_ header: Header, password: SecureBytes) throws(GnomeKeyringFileError) -> SecureBytes {
        guard !header.encrypted.isEmpty else { throw .damaged("the encrypted part is empty") }
        do {
            let (key, iv) = try key(password: password, salt: header.salt, iterations: header.iterations)
            let plaintext = try key.decryptBlocks(header.encrypted, iv: iv)
            guard plaintext.count >= 16,
                  try SecureDigest.hash(.md5, plaintext, range: 16..<plaintext.count).constantTimeEquals(try plaintext.slice(0..<16)) else {
                throw GnomeKeyringFileError.wrongPassword
            }
            return plaintext
        } catch let error as GnomeKeyringFileError {
            throw error
        } catch CryptoError.secureMemoryExhausted {
            throw .outOfSecureMemory
        } catch {
            throw .damaged("the encrypted part cannot be decrypted (\(error))")
        }
    }

    /// The AES key and IV of a keyring: SHA-256 of password and salt, hashed again
    /// `iterations - 1` times; the key is its first half, the IV its second.
    static func key(password: SecureBytes, salt: [UInt8], iterations: UInt32) throws -> (AES128CBCKey, [UInt8]) {
        var digest = try SecureDigest.hash(.sha256, password, try SecureBytes(salt))
        for _ in 1..<max(iterations, 1) { digest = try SecureDigest.hash(.sha256, digest) }
        // The IV is derived like the key, but it is not secret.
        return (try AES128CBCKey(try digest.slice(0..<16)), digest.unprotectedArray(16..<32))
    }

    private static func item(_ reader: inout ByteReader, id: UInt32, type: UInt32) throws(GnomeKeyringFileError) -> GnomeKeyring.Item {
        let label = try reader.string("the label") ?? ""
        let secret = try reader.secret("the secret")
        let created = try reader.time("the creation time")
        let modified = try reader.time("the modification time")
        _ = try reader.string("a reserved string")
        try reader.skip(16, "the reserved fields")
        var attributes: [String: String] = [:]
        var uint32Attributes: Set<String> = []
        for _ in 0..<(try reader.uint32("the number of attributes")) {
            guard let name = try reader.string("an attribute name") else { throw .damaged("\(reader.context) has an attribute without a name") }
            switch try reader.uint32("an attribute kind") {
            case 0: attributes[name] = try reader.string("an attribute value") ?? ""
            case 1:
                attributes[name] = String(try reader.uint32("an attribute value"))
                uint32Attributes.insert(name)
            case let kind: throw .damaged("\(reader.context) has an attribute of unknown kind \(kind)")
            }
        }
        for _ in 0..<(try reader.uint32("the number of access rules")) {
            _ = try reader.uint32("an access rule")
            _ = try reader.string("an access rule's name")
            _ = try reader.string("an access rule's path")
            _ = try reader.string("an access rule's reserved field")
            _ = try reader.uint32("an access rule's reserved field")
        }
        GnomeKeyring.ItemType.recordSchema(ofStored: type, in: &attributes)
        return GnomeKeyring.Item(id: id, label: label, attributes: attributes, uint32Attributes: uint32Attributes,
                                 secret: secret, created: created, modified: modified)
    }
}
