import CofferCrypto
import DBusKit
import SecretServiceProtocol

/// A collection's properties at one moment.
public struct CollectionSnapshot: Sendable, Hashable {
    public var label: String
    public var isLocked: Bool
    /// Seconds since 1970 (0 when the provider does not say).
    public var created: UInt64
    public var modified: UInt64
    public var items: [ObjectPath]
}

/// An item's properties at one moment (a locked item's may be empty).
public struct ItemSnapshot: Sendable, Hashable {
    public var label: String
    public var attributes: [String: String]
    public var isLocked: Bool
    public var created: UInt64
    public var modified: UInt64
}

extension SecretServiceClient {
    // MARK: Collections

    public func collection(_ path: ObjectPath) throws(DBusError) -> CollectionSnapshot {
        let values = try properties(of: CollectionInterface.name, on: path)
        typealias P = CollectionInterface.Property
        guard let label = values[P.label]?.string, let locked = values[P.locked]?.bool,
              let items = values[P.items]?.objectPathArray else { throw Self.unexpected("GetAll of a collection") }
        return CollectionSnapshot(label: label, isLocked: locked, created: values[P.created]?.uint64 ?? 0,
                                  modified: values[P.modified]?.uint64 ?? 0, items: items)
    }

    /// What a Coffer daemon says of damage to `collection`'s file (see
    /// `CofferCollectionInterface`); nil when there is none, or when the provider is not Coffer
    /// (it has no such interface).
    public func recovery(of collection: ObjectPath) throws(DBusError) -> String? {
        let value: DBusValue
        do {
            value = try property(CofferCollectionInterface.Property.recovery, of: CofferCollectionInterface.name, on: collection)
        } catch {
            // How providers without the interface answer (GDBus: InvalidArgs, "No such interface").
            let absent = [DBusError.Name.unknownInterface, DBusError.Name.unknownProperty, DBusError.Name.invalidArgs]
            if absent.contains(error.name) { return nil }
            throw error
        }
        guard case .string(let text) = value else { throw Self.unexpected("Get \(CofferCollectionInterface.Property.recovery)") }
        return text.isEmpty ? nil : text
    }

    public func setLabel(of collection: ObjectPath, to label: String) throws(DBusError) {
        try setProperty(CollectionInterface.Property.label, of: CollectionInterface.name, on: collection, to: .string(label))
    }

    /// Deletes a collection and its items (through a prompt if the provider asks for one).
    public func deleteCollection(_ collection: ObjectPath) throws {
        _ = try completeIfNeeded(try call(CollectionInterface.Delete.self, on: collection, NoArguments()).prompt)
    }

    /// Items of `collection` whose attributes include `attributes`.
    public func search(in collection: ObjectPath, _ attributes: [String: String]) throws(DBusError) -> [ObjectPath] {
        try call(CollectionInterface.SearchItems.self, on: collection, .init(attributes: attributes)).results
    }

    /// Stores an item; with `replace`, the item with the same attributes is updated instead.
    public func createItem(in collection: ObjectPath, label: String, attributes: [String: String],
                           secret: SecureBytes, contentType: String = "text/plain", replace: Bool = false,
                           session: ClientSession) throws -> ObjectPath {
        let input = CollectionInterface.CreateItem.Input(
            properties: .init(label: label, attributes: attributes),
            secret: try session.encode(secret, contentType: contentType), replace: replace)
        let reply = try call(CollectionInterface.CreateItem.self, on: collection, input)
        guard let result = try completeIfNeeded(reply.prompt) else { return reply.item }
        return try ObjectPath(dbusValue: result)
    }

    // MARK: Items

    public func item(_ path: ObjectPath) throws(DBusError) -> ItemSnapshot {
        let values = try properties(of: ItemInterface.name, on: path)
        typealias P = ItemInterface.Property
        guard let label = values[P.label]?.string, let attributes = values[P.attributes]?.stringDictionary,
              let locked = values[P.locked]?.bool else { throw Self.unexpected("GetAll of an item") }
        return ItemSnapshot(label: label, attributes: attributes, isLocked: locked,
                            created: values[P.created]?.uint64 ?? 0, modified: values[P.modified]?.uint64 ?? 0)
    }

    public func setLabel(ofItem item: ObjectPath, to label: String) throws(DBusError) {
        try setProperty(ItemInterface.Property.label, of: ItemInterface.name, on: item, to: .string(label))
    }

    public func setAttributes(of item: ObjectPath, to attributes: [String: String]) throws(DBusError) {
        try setProperty(ItemInterface.Property.attributes, of: ItemInterface.name, on: item, to: attributes.dbusValue)
    }

    /// The item's secret, in secure memory.
    public func secret(of item: ObjectPath, session: ClientSession) throws -> Secret {
        try session.decode(try call(ItemInterface.GetSecret.self, on: item, .init(session: session.path)).secret)
    }

    public func setSecret(of item: ObjectPath, to secret: SecureBytes, contentType: String = "text/plain",
                          session: ClientSession) throws {
        _ = try call(ItemInterface.SetSecret.self, on: item, .init(secret: try session.encode(secret, contentType: contentType)))
    }

    /// Deletes an item (through a prompt if the provider asks for one).
    public func deleteItem(_ item: ObjectPath) throws {
        _ = try completeIfNeeded(try call(ItemInterface.Delete.self, on: item, NoArguments()).prompt)
    }
}
