import CofferCore
import DBusKit

/// A collection (also reached through its aliases): org.freedesktop.Secret.Collection.
struct CollectionObject: DBusObject {
    let server: SecretServer
    let id: CollectionID

    var interfaces: [InterfaceDescription] { [SecretInterface.collectionDescription] }
    private var path: ObjectPath { SecretPath.collection(id) }

    static let labelKey = "org.freedesktop.Secret.Item.Label"
    static let attributesKey = "org.freedesktop.Secret.Item.Attributes"
    static let typeKey = "org.freedesktop.Secret.Item.Type"

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        let info = try server.keychain.info(id)
        switch name {
        case "Items": return .objectPathArray(server.itemPaths(in: id))
        case "Label": return .string(info.label)
        case "Locked": return .boolean(info.isLocked)
        case "Created": return .uint64(info.created)
        default: return .uint64(info.modified)
        }
    }

    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws {
        try server.keychain.collection(id).setLabel(value.string!)
        server.emitPropertiesChanged(path, SecretInterface.collection, changed: ["Label": value])
        server.emit(SecretPath.service, SecretInterface.service, "CollectionChanged", [.objectPath(path)])
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        let a = call.arguments
        switch call.member {
        case "Delete":
            try server.keychain.deleteCollection(id)
            server.log("collection \(id) deleted by \(call.sender)")
            server.emit(SecretPath.service, SecretInterface.service, "CollectionDeleted", [.objectPath(path)])
            server.collectionsChanged()
            return .reply([.objectPath(SecretPath.none)])
        case "SearchItems":
            let results = try server.keychain.search(Query(attributes: a[0].stringDictionary!, collection: id))
            return .reply([.objectPathArray(results.map { SecretPath.item($0.reference) })])
        case "CreateItem":
            return .reply(try createItem(properties: a[0].variantDictionary!, secret: a[1], replace: a[2].bool!, caller: call.sender))
        default:
            throw DBusError.unknownMethod("no method \(call.interface).\(call.member)")
        }
    }

    /// The properties CreateItem takes, with their types: gnome-keyring's list. Locked, Created
    /// and Modified are accepted (libgnome-keyring-era callers send them) and ignored.
    static let itemProperties: [String: String] = [
        labelKey: "s", attributesKey: "a{ss}", typeKey: "s",
        "org.freedesktop.Secret.Item.Locked": "b", "org.freedesktop.Secret.Item.Created": "t",
        "org.freedesktop.Secret.Item.Modified": "t",
    ]

    /// Refuses, as gnome-keyring does, a property dictionary with a name CreateItem does not
    /// know or a value of another type (an extra variant around it included), rather than
    /// storing something other than what the client meant.
    static func checkItemProperties(_ properties: [String: DBusValue]) throws(DBusError) {
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            guard let type = itemProperties[name] else {
                throw .invalidArgs("invalid properties: unknown property '\(name)'; CreateItem takes \(labelKey), \(attributesKey) and \(typeKey)")
            }
            guard value.signatureString == type else {
                throw .invalidArgs("invalid properties: \(name) must be a variant holding '\(type)', not '\(value.signatureString)'")
            }
        }
    }

    private func createItem(properties: [String: DBusValue], secret value: DBusValue, replace: Bool,
                            caller: String) throws -> [DBusValue] {
        try Self.checkItemProperties(properties)
        let label = try Self.unwrap(properties[Self.labelKey], as: \.string, "a string") ?? ""
        var attributes = try Self.unwrap(properties[Self.attributesKey], as: \.stringDictionary, "a string dictionary") ?? [:]
        if let type = try Self.unwrap(properties[Self.typeKey], as: \.string, "a string"), attributes[ItemClass.schemaAttribute] == nil {
            attributes[ItemClass.schemaAttribute] = type
        }
        guard try !server.keychain.collection(id).isLocked else {
            throw SecretError.isLocked("Cannot create an item in a locked collection")
        }
        let secret = try server.secret(from: value, for: caller)
        let (reference, isNew) = try server.keychain.insert(NewItem(label: label, attributes: attributes, secret: secret, owner: caller),
                                                            into: id, onDuplicate: replace ? .replace : .allow)
        server.itemsChanged(in: id, isNew ? "ItemCreated" : "ItemChanged", reference)
        return [.objectPath(SecretPath.item(reference)), .objectPath(SecretPath.none)]
    }

    /// A property dictionary value (its variant already unwrapped) of the expected type, or nil
    /// if absent.
    static func unwrap<T>(_ value: DBusValue?, as extract: KeyPath<DBusValue, T?>, _ what: String) throws(DBusError) -> T? {
        guard let value else { return nil }
        guard let result = value[keyPath: extract] else {
            throw .invalidArgs("invalid properties: a value must be \(what)")
        }
        return result
    }
}
