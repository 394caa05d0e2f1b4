import DBusKit

/// The `a{sv}` properties `CreateCollection` (and gnome-keyring's `CreateWithMasterPassword`)
/// take. Only the label is used; other names are ignored, as gnome-keyring does. A label sent
/// as `org.freedesktop.Secret.Item.Label` (as a widely used Rust client does) counts too.
public struct CollectionProperties: DBusRepresentable, Hashable {
    public static let labelKey = "org.freedesktop.Secret.Collection.Label"
    /// The item property some clients send for a collection's label.
    public static let itemLabelKey = ItemProperties.labelKey

    /// nil: the server picks one ("Unnamed").
    public var label: String?

    public init(label: String? = nil) { self.label = label }

    public static var dbusType: Signature { .variantDictionary }

    public init(dbusValue: DBusValue) throws(DBusError) {
        let properties = try [String: DBusVariant](dbusValue: dbusValue)
        guard let (key, wrapped) = [Self.labelKey, Self.itemLabelKey].lazy
            .compactMap({ key in properties[key].map { (key, $0.value) } }).first else { return }
        // Some clients wrap the label in a second variant.
        let value = wrapped.variantValue ?? wrapped
        guard case .string(let label) = value else { throw .invalidArgs("\(key) must be a string") }
        self.label = label
    }

    public var dbusValue: DBusValue {
        var properties: [String: DBusVariant] = [:]
        if let label { properties[Self.labelKey] = DBusVariant(.string(label)) }
        return properties.dbusValue
    }
}
