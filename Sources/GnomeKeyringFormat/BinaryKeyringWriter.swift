import CofferCrypto
import SystemKit

/// Writes gnome-keyring's encrypted binary format (the layout `BinaryKeyringReader` reads), so
/// that gnome-keyring opens what Coffer exports: the clear header lists each item's id, type and
/// hashed attributes (gnome-keyring searches locked keyrings with them), and one AES-128-CBC
/// block holds the items, zero-padded, behind an MD5 of itself.
enum BinaryKeyringWriter {
    static func write(_ keyring: GnomeKeyring, password: SecureBytes) throws -> [UInt8] {
        var out = BinaryKeyringReader.magic + [0, 0, 0, 0]
        appendString(keyring.label, to: &out)
        // gnome-keyring's own writer puts the modification time first.
        appendUInt64(keyring.modified, to: &out)
        appendUInt64(keyring.created, to: &out)
        appendUInt32(0, to: &out)   // lock flags
        appendUInt32(0, to: &out)   // lock timeout
        let iterations = UInt32(1000 + Random.bytes(2).reduce(0) { $0 << 8 | Int($1) } % 3096)
        appendUInt32(iterations, to: &out)
        let salt = Random.bytes(8)
        out += salt
        out += [UInt8](repeating: 0, count: 16)   // reserved
        appendUInt32(UInt32(keyring.items.count), to: &out)
        for item in keyring.items {
            appendUInt32(item.id, to: &out)
            appendUInt32(GnomeKeyring.ItemType(schema: item.schema).rawValue, to: &out)
            let attributes = item.attributes.sorted { $0.key < $1.key }
            appendUInt32(UInt32(attributes.count), to: &out)
            for (name, value) in attributes {
                appendString(name, to: &out)
                if let number = uint32(name, value, of: item) {
                    appendUInt32(1, to: &out)
                    appendUInt32(0x1827_3645 ^ number ^ (number << 16 | number >> 16), to: &out)
                } else {
                    appendUInt32(0, to: &out)
                    appendString(Hex.encode(Digest.md5(Array(value.utf8))), to: &out)
                }
            }
        }
        let encrypted = try encryptedItems(keyring, password: password, iterations: iterations, salt: salt)
        appendUInt32(UInt32(encrypted.count), to: &out)
        return out + encrypted
    }

    /// The value of an attribute the file should store as a uint32, if it is one.
    private static func uint32(_ name: String, _ value: String, of item: GnomeKeyring.Item) -> UInt32? {
        item.uint32Attributes.contains(name) ? UInt32(value) : nil
    }

    private static func encryptedItems(_ keyring: GnomeKeyring, password: SecureBytes, iterations: UInt32,
                                       salt: [UInt8]) throws -> [UInt8] {
        let plain = try SecureBytes(count: 16)   // the MD5 of the rest goes here
        for item in keyring.items {
            try appendString(item.label, to: plain)
            try appendUInt32(UInt32(item.secret.count), to: plain)
            try plain.append(item.secret)
            try appendUInt64(item.created, to: plain)
            try appendUInt64(item.modified, to: plain)
            try appendUInt32(0xFFFF_FFFF, to: plain)   // reserved string: none
            for _ in 0..<4 { try appendUInt32(0, to: plain) }
            let attributes = item.attributes.sorted { $0.key < $1.key }
            try appendUInt32(UInt32(attributes.count), to: plain)
            for (name, value) in attributes {
                try appendString(name, to: plain)
                if let number = uint32(name, value, of: item) {
                    try appendUInt32(1, to: plain)
                    try appendUInt32(number, to: plain)
                } else {
                    try appendUInt32(0, to: plain)
                    try appendString(value, to: plain)
                }
            }
            try appendUInt32(0, to: plain)   // no access rules
        }
        while plain.count % 16 != 0 { try plain.append(UInt8(0)) }
        let check = try SecureDigest.hash(.md5, plain, range: 16..<plain.count)
        for index in 0..<16 { plain[index] = check[index] }
        let (key, iv) = try BinaryKeyringReader.key(password: password, salt: salt, iterations: iterations)
        return try key.encryptBlocks(plain, iv: iv)
    }

    private static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendUInt64(_ value: UInt64, to out: inout [UInt8]) {
        appendUInt32(UInt32(value >> 32), to: &out)
        appendUInt32(UInt32(value & 0xFFFF_FFFF), to: &out)
    }

    private static func appendString(_ text: String, to out: inout [UInt8]) {
        appendUInt32(UInt32(text.utf8.count), to: &out)
        out += Array(text.utf8)
    }

    private static func appendUInt32(_ value: UInt32, to out: SecureBytes) throws {
        try out.appendUInt32LE(value.byteSwapped)
    }

    private static func appendUInt64(_ value: UInt64, to out: SecureBytes) throws {
        try out.appendUInt64LE(value.byteSwapped)
    }

    private static func appendString(_ text: String, to out: SecureBytes) throws {
        try appendUInt32(UInt32(text.utf8.count), to: out)
        try out.append(Array(text.utf8))
    }
}
