import CofferCrypto
import DBusKit
import SecretServiceClient

/// Every field a Secret Service provider keeps of one item, as a client reads it over the bus:
/// what an import or an export must carry over unchanged.
public struct ProviderItem: Hashable, CustomStringConvertible {
    public let label: String
    public let attributes: [String: String]
    public let created: UInt64
    public let modified: UInt64
    public let secret: [UInt8]
    public let contentType: String

    /// This item as gnome-keyring serves it back from its file: it keeps no content type
    /// (always `text/plain`) and names the generic schema when an item has none.
    public var asGnomeKeyringServesIt: ProviderItem {
        var attributes = attributes
        if attributes["xdg:schema"] == nil { attributes["xdg:schema"] = "org.freedesktop.Secret.Generic" }
        return ProviderItem(label: label, attributes: attributes, created: created, modified: modified, secret: secret,
                            contentType: "text/plain")
    }

    public var description: String {
        "'\(label)' \(attributes.sorted { $0.key < $1.key }) created \(created) modified \(modified) \(contentType) \(secret.count) bytes"
    }
}

extension SecretServiceClient {
    /// Every item of the (unlocked) `collection`, every field of each.
    public func everyItem(of collection: ObjectPath, session: ClientSession) throws -> Set<ProviderItem> {
        let paths = try self.collection(collection).items
        var result: Set<ProviderItem> = []
        try forEachSecret(of: paths, session: session) { position, secret in
            let item = try self.item(paths[position])
            result.insert(ProviderItem(label: item.label, attributes: item.attributes, created: item.created,
                                       modified: item.modified, secret: secret.bytes.unprotectedArray(0..<secret.bytes.count), contentType: secret.contentType))
        }
        return result
    }
}
