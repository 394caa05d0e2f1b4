import DBusKit

/// Reads every item of `login` over D-Bus: label and attributes through the Properties
/// interface, secrets and content types through one `GetSecrets` with a plain session.
enum StoreReader {
    static func readLogin(address: String) throws -> [ObjectPath: ItemState] {
        let connection = try DBusConnection(address: address)
        defer { connection.close() }
        func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]) throws -> [DBusValue] {
            try connection.call(destination: TortureDaemon.busName, path: path, interface: interface, member: member,
                                arguments: arguments, timeout: Writer.callTimeout)
        }
        let properties = "org.freedesktop.DBus.Properties"
        let itemsReply = try call(Writer.login, properties, "Get", [.string("org.freedesktop.Secret.Collection"), .string("Items")])
        guard let paths = itemsReply.first?.variantValue?.objectPathArray else { throw DBusError.failed("Items: \(itemsReply)") }
        let session = try call(Writer.service, "org.freedesktop.Secret.Service", "OpenSession",
                               [.string("plain"), .variant(.string(""))]).last?.objectPath ?? .root
        let secretsReply = try call(Writer.service, "org.freedesktop.Secret.Service", "GetSecrets",
                                    [.objectPathArray(paths), .objectPath(session)])
        guard let entries = secretsReply.first?.dictionaryEntries else { throw DBusError.failed("GetSecrets: \(secretsReply)") }
        var secrets: [ObjectPath: (bytes: [UInt8], contentType: String)] = [:]
        for entry in entries {
            guard let path = entry.key.objectPath, let fields = entry.value.structureFields, fields.count == 4,
                  let bytes = fields[2].bytes, let contentType = fields[3].string else {
                throw DBusError.failed("GetSecrets entry \(entry)")
            }
            secrets[path] = (bytes, contentType)
        }
        var items: [ObjectPath: ItemState] = [:]
        for path in paths {
            let all = try call(path, properties, "GetAll", [.string("org.freedesktop.Secret.Item")]).first?.variantDictionary
            guard let label = all?["Label"]?.string, let attributes = all?["Attributes"]?.stringDictionary else {
                throw DBusError.failed("GetAll \(path): \(String(describing: all))")
            }
            guard let secret = secrets[path] else { throw DBusError.failed("GetSecrets left out \(path)") }
            items[path] = ItemState(label: label, attributes: attributes, secret: secret.bytes, contentType: secret.contentType)
        }
        return items
    }
}
