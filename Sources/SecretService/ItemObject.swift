import CofferCore
import DBusKit
import SecretServiceProtocol

/// One item: org.freedesktop.Secret.Item. Reading `Label` or `Attributes` of a locked item
/// gives empty values rather than an error, so that clients listing items keep working.
struct ItemObject: DBusObject {
    let server: SecretServer
    let reference: ItemReference

    var interfaces: [InterfaceDescription] { [ItemInterface.description] }
    private var path: ObjectPath { SecretPath.item(reference) }

    typealias Item = ItemInterface

    static let methods = MethodTable<ItemObject>()
        .deferring(Item.Delete.self) { object, _, call in
            let (server, reference) = (object.server, object.reference)
            server.write(.remove(reference.item), in: reference.collection, by: call.sender, as: .delete, reply: { outcome in
                call.answer(outcome) { _ in Item.Delete.Output(prompt: SecretPath.none) }
            }, then: { removed, application in
                server.gate.record(AuditEvent(action: .delete, outcome: .ok, application: application, collection: reference.collection,
                                              item: reference.item, label: removed.label))
                server.itemsChanged(in: reference.collection, CollectionInterface.Signal.itemDeleted, reference)
            })
            return .deferred
        }
        .deferring(Item.GetSecret.self) { object, input, call in
            let (server, reference, sessionPath) = (object.server, object.reference, input.session)
            _ = try server.session(at: sessionPath, for: call.sender)
            server.gate.authorize(.read, of: [reference], by: call.sender) { verdict in
                do {
                    switch verdict.verdicts[0] {
                    case .allowed: break
                    case .refused(let why): throw AccessGate.refusal(of: reference, to: verdict.application, because: why)
                    case .locked: throw CofferError.locked(reference.collection.rawValue)
                    case .missing: throw CofferError.itemNotFound
                    }
                    let session = try server.session(at: sessionPath, for: call.sender)
                    call.reply(Item.GetSecret.Output(secret: try session.encode(try server.keychain.secret(of: reference))))
                } catch {
                    call.fail(error)
                }
            }
            return .deferred
        }
        .deferring(Item.SetSecret.self) { object, input, call in
            let (server, reference) = (object.server, object.reference)
            let secret = try server.secret(from: input.secret, of: call)
            server.write(.update(reference.item, ItemChanges(secret: secret)), in: reference.collection, by: call.sender,
                         as: .change("change the secret of"), reply: { outcome in
                call.answer(outcome) { _ in NoArguments() }
            }, then: { changed, application in
                server.auditWrite(.write, of: reference, by: application, detail: "secret changed", label: changed.label)
                server.itemsChanged(in: reference.collection, CollectionInterface.Signal.itemChanged, reference)
            })
            return .deferred
        }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        let locked = try server.keychain.info(reference.collection).isLocked
        if name == Item.Property.locked { return .boolean(locked) }
        let metadata = locked ? nil : try server.keychain.metadata(of: reference)
        switch name {
        case Item.Property.attributes: return .stringDictionary(metadata?.attributes ?? [:])
        case Item.Property.label: return .string(metadata?.label ?? "")
        case Item.Property.type: return .string(metadata?.attributes[ItemClass.schemaAttribute] ?? ItemClass.genericPassword.schema)
        case Item.Property.created: return .uint64(metadata?.created ?? 0)
        default: return .uint64(metadata?.modified ?? 0)
        }
    }

    /// `Label`, `Attributes` and `Type`; the object server has checked the value's type. The
    /// change is committed by the collection's writer, and answered once durable.
    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        let changes: ItemChanges, request: AccessRequest
        switch name {
        case Item.Property.label:
            changes = ItemChanges(label: try String(dbusValue: value))
            request = .change("rename")
        case Item.Property.attributes:
            let attributes = try [String: String](dbusValue: value)
            // No item becomes an application's key but through the Secret portal.
            if ApplicationKey.isKey(attributes) { throw DBusError.accessDenied("Access denied: \(ApplicationKey.plantRefusal)") }
            changes = ItemChanges(attributes: attributes)
            request = .change("change the attributes of")
        default:
            let schema = try String(dbusValue: value)
            if schema == ApplicationKey.schema { throw DBusError.accessDenied("Access denied: \(ApplicationKey.plantRefusal)") }
            changes = ItemChanges(schema: schema)
            request = .change("change the type of")
        }
        let (server, reference, path) = (server, reference, path)
        server.write(.update(reference.item, changes), in: reference.collection, by: call.sender, as: request, reply: { outcome in
            call.answer(outcome) { _ in NoArguments() }
        }, then: { changed, application in
            server.auditWrite(.write, of: reference, by: application, detail: "\(name) changed", label: changed.label)
            server.emitPropertiesChanged(path, Item.name, changed: [name: value])
            server.itemsChanged(in: reference.collection, CollectionInterface.Signal.itemChanged, reference)
        })
        return .deferred
    }
}
