import DBusKit

/// The `a{sv}` properties `CreateCollection` (and gnome-keyring's `CreateWithMasterPassword`)
/// take. Only the label is used; other names are ignored, as gnome-keyring does.
public struct CollectionProperties: DBusRepresentable, Hashable {
    public static let labelKey = "org.freedesktop.Secret.Collection.Label"

    /// nil: the server picks one ("Unnamed").
    public var label: String?

    public init(label: String? = nil) { self.label = label }

    public static var dbusType: Signature { .variantDictionary }

    public init(dbusValue: DBusValue) throws(DBusError) {
        let properties = try [String: DBusVariant](dbusValue: dbusValue)
        guard let wrapped = properties[Self.labelKey]?.value else { return }
        // Some clients wrap the label in a second variant.
        let value = wrapped.variantValue ?? wrapped
        guard case .string(let label) = value else { throw .invalidArgs("\(Self.labelKey) must be a string") }
        self.label = label
    }

    public var dbusValue: DBusValue {
        var properties: [String: DBusVariant] = [:]
        if let label { properties[Self.labelKey] = DBusVariant(.string(label)) }
        return properties.dbusValue
    }
}
