import CofferCore
import DBusKit

/// One item: org.freedesktop.Secret.Item. Reading `Label` or `Attributes` of a locked item
/// gives empty values rather than an error, so that clients listing items keep working.
struct ItemObject: DBusObject {
    let server: SecretServer
    let reference: ItemReference

    var interfaces: [InterfaceDescription] { [SecretInterface.itemDescription] }
    private var path: ObjectPath { SecretPath.item(reference) }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        let locked = try server.keychain.info(reference.collection).isLocked
        if name == "Locked" { return .boolean(locked) }
        let metadata = locked ? nil : try server.keychain.metadata(of: reference)
        switch name {
        case "Attributes": return .stringDictionary(metadata?.attributes ?? [:])
        case "Label": return .string(metadata?.label ?? "")
        case "Type": return .string(metadata?.attributes[ItemClass.schemaAttribute] ?? ItemClass.genericPassword.schema)
        case "Created": return .uint64(metadata?.created ?? 0)
        default: return .uint64(metadata?.modified ?? 0)
        }
    }

    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws {
        switch name {
        case "Label":
            try server.keychain.update(reference, with: ItemChanges(label: value.string!))
        case "Attributes":
            try server.keychain.update(reference, with: ItemChanges(attributes: value.stringDictionary!))
        default:
            var attributes = try server.keychain.metadata(of: reference).attributes
            attributes[ItemClass.schemaAttribute] = value.string!
            try server.keychain.update(reference, with: ItemChanges(attributes: attributes))
        }
        server.emitPropertiesChanged(path, SecretInterface.item, changed: [name: value])
        server.itemsChanged(in: reference.collection, "ItemChanged", reference)
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        switch call.member {
        case "Delete":
            try server.keychain.delete(reference)
            server.itemsChanged(in: reference.collection, "ItemDeleted", reference)
            return .reply([.objectPath(SecretPath.none)])
        case "GetSecret":
            let session = try server.session(at: call.arguments[0].objectPath!, for: call.sender)
            return .reply([try session.encode(try server.keychain.secret(of: reference))])
        case "SetSecret":
            let secret = try server.secret(from: call.arguments[0], for: call.sender)
            try server.keychain.update(reference, with: ItemChanges(secret: secret))
            server.itemsChanged(in: reference.collection, "ItemChanged", reference)
            return .empty
        default:
            throw DBusError.unknownMethod("no method \(call.interface).\(call.member)")
        }
    }
}
