import DBusKit

/// The `a{sv}` properties `CreateItem` takes: label, attributes and (gnome-keyring's) type.
///
/// Decoding is strict, as gnome-keyring's is: a name CreateItem does not know, or a value of
/// another type (an extra variant around it included), is `InvalidArgs` rather than something
/// other than what the client meant being stored. `Locked`, `Created` and `Modified` are
/// accepted (libgnome-keyring-era callers send them) and ignored.
public struct ItemProperties: DBusRepresentable, Hashable {
    public static let labelKey = "org.freedesktop.Secret.Item.Label"
    public static let attributesKey = "org.freedesktop.Secret.Item.Attributes"
    public static let typeKey = "org.freedesktop.Secret.Item.Type"
    /// Every name accepted, with its type.
    static let accepted: [String: Signature] = [
        labelKey: .string, attributesKey: .stringDictionary, typeKey: .string,
        "org.freedesktop.Secret.Item.Locked": .boolean, "org.freedesktop.Secret.Item.Created": .uint64,
        "org.freedesktop.Secret.Item.Modified": .uint64,
    ]

    public var label: String?
    public var attributes: [String: String]?
    /// The schema name (gnome-keyring's `Type`, libsecret's `xdg:schema`).
    public var type: String?

    public init(label: String? = nil, attributes: [String: String]? = nil, type: String? = nil) {
        self.label = label
        self.attributes = attributes
        self.type = type
    }

    public static var dbusType: Signature { .variantDictionary }

    public init(dbusValue: DBusValue) throws(DBusError) {
        let properties = try [String: DBusVariant](dbusValue: dbusValue)
        for (name, variant) in properties.sorted(by: { $0.key < $1.key }) {
            guard let type = Self.accepted[name] else {
                throw .invalidArgs("invalid properties: unknown property '\(name)'; CreateItem takes \(Self.labelKey), \(Self.attributesKey) and \(Self.typeKey)")
            }
            guard variant.value.signatureString == type.rawValue else {
                throw .invalidArgs("invalid properties: \(name) must be a variant holding '\(type)', not '\(variant.value.signatureString)'")
            }
        }
        label = try properties[Self.labelKey].map { (v) throws(DBusError) in try String(dbusValue: v.value) }
        attributes = try properties[Self.attributesKey].map { (v) throws(DBusError) in try [String: String](dbusValue: v.value) }
        type = try properties[Self.typeKey].map { (v) throws(DBusError) in try String(dbusValue: v.value) }
    }

    public var dbusValue: DBusValue {
        var properties: [String: DBusVariant] = [:]
        if let label { properties[Self.labelKey] = DBusVariant(label.dbusValue) }
        if let attributes { properties[Self.attributesKey] = DBusVariant(attributes.dbusValue) }
        if let type { properties[Self.typeKey] = DBusVariant(type.dbusValue) }
        return properties.dbusValue
    }
}
