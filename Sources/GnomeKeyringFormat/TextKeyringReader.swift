import CofferCrypto
import SystemKit

/// gnome-keyring's text format (§12.5 of the spec digest), for keyrings whose password is
/// empty: a `[keyring]` group, a group per item named by its id, and `<id>:attribute<N>` groups.
enum TextKeyringReader {
    static func read(_ bytes: [UInt8]) throws(GnomeKeyringFileError) -> GnomeKeyring {
        guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\0") else { throw .notAKeyring }
        let file = KeyFile(text)
        guard file.problems.isEmpty, file.groups.first == "keyring" else { throw .notAKeyring }
        var items: [GnomeKeyring.Item] = []
        for group in file.groups.dropFirst() where !group.contains(":") {
            guard let id = UInt32(group) else { throw .damaged("[\(group)] is neither the keyring nor an item id") }
            items.append(try item(id, group: group, file))
        }
        let times = (try file.number("keyring", "ctime") ?? 0, try file.number("keyring", "mtime") ?? 0)
        return GnomeKeyring(label: try file.string("keyring", "display-name") ?? "", created: times.0,
                            modified: times.1, items: items)
    }

    private static func item(_ id: UInt32, group: String, _ file: KeyFile) throws(GnomeKeyringFileError) -> GnomeKeyring.Item {
        var attributes: [String: String] = [:]
        var uint32Attributes: Set<String> = []
        for attributeGroup in file.groups where attributeGroup.hasPrefix(group + ":attribute") {
            guard let name = try file.string(attributeGroup, "name") else { continue }
            if file.untrimmedValue("type", in: attributeGroup) == "uint32" {
                guard let number = try file.number(attributeGroup, "value"), number <= UInt64(UInt32.max) else {
                    throw .damaged("[\(attributeGroup)] has no uint32 value")
                }
                attributes[name] = String(number)
                uint32Attributes.insert(name)
            } else {
                attributes[name] = try file.string(attributeGroup, "value") ?? ""
            }
        }
        let type = try file.number(group, "item-type") ?? 0
        GnomeKeyring.ItemType.recordSchema(ofStored: UInt32(truncatingIfNeeded: type), in: &attributes)
        return GnomeKeyring.Item(id: id, label: try file.string(group, "display-name") ?? "", attributes: attributes,
                                 uint32Attributes: uint32Attributes, secret: try secret(group, file),
                                 created: try file.number(group, "ctime") ?? 0, modified: try file.number(group, "mtime") ?? 0)
    }

    private static func secret(_ group: String, _ file: KeyFile) throws(GnomeKeyringFileError) -> SecureBytes {
        do {
            if let text = try file.string(group, "secret") { return try SecureBytes(Array(text.utf8)) }
            guard let hex = file.value("binary-secret", in: group) else { return try SecureBytes(count: 0) }
            let digits = Array(hex.utf8)
            guard digits.count % 2 == 0 else { throw GnomeKeyringFileError.damaged("[\(group)] binary-secret is not hex") }
            let secret = try SecureBytes(capacity: digits.count / 2)
            for index in stride(from: 0, to: digits.count, by: 2) {
                guard let high = Hex.value(of: digits[index]), let low = Hex.value(of: digits[index + 1]) else {
                    throw GnomeKeyringFileError.damaged("[\(group)] binary-secret is not hex")
                }
                try secret.append(high << 4 | low)
            }
            return secret
        } catch let error as GnomeKeyringFileError {
            throw error
        } catch {
            throw .outOfSecureMemory
        }
    }
}
