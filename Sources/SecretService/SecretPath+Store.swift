import CofferCore
import DBusKit
import SecretServiceProtocol

extension SecretPath {
    /// The path of the store's collection `id`.
    public static func collection(_ id: CollectionID) -> ObjectPath { collection(named: id.rawValue) }

    /// The path of the store's item `reference`.
    public static func item(_ reference: ItemReference) -> ObjectPath {
        item(reference.item, inCollectionNamed: reference.collection.rawValue)
    }
}
