import CofferCore
import CofferCrypto
import DBusKit
import SecretServiceClient
import SecretServiceProtocol

/// One collection of another Secret Service provider, read over the bus.
public struct ProviderCollection: Sendable {
    public let path: ObjectPath
    public let label: String
    /// The collection id it becomes in Coffer: its path's last element, made a valid id.
    public let id: CollectionID
    /// Every item, or nil when they could not all be read (then `problem` says why).
    public let items: [NewItem]?
    public let problem: String?
}

/// Reads every collection and item of the provider a client talks to (gnome-keyring,
/// KeePassXC, KWallet, oo7), unlocking each through that provider's own prompt.
public enum BusImport {
    /// The collections of `client`'s provider, with their items (secrets in secure memory).
    /// The in-memory `session` collection is left out. `progress` hears of each collection.
    public static func read(from client: SecretServiceClient, progress: (String) -> Void) throws -> [ProviderCollection] {
        let session = try client.openSession(.preferEncrypted)
        defer { try? client.closeSession(session) }
        var result: [ProviderCollection] = []
        for path in try client.collections() {
            let name = path.lastElement.flatMap(ObjectPath.unescapeElement) ?? "imported"
            guard name != CollectionID.session.rawValue else { continue }
            let id = CollectionID(name) ?? CollectionID.derived(fromLabel: name, avoiding: [])
            var collection = try client.collection(path)
            if collection.isLocked {
                progress("unlocking '\(collection.label)' through the provider's prompt")
                _ = try? client.unlock([path])
                collection = try client.collection(path)
            }
            guard !collection.isLocked else {
                result.append(ProviderCollection(path: path, label: collection.label, id: id, items: nil,
                                                 problem: "it stayed locked (its prompt was dismissed or could not be shown)"))
                continue
            }
            var items: [NewItem?] = Array(repeating: nil, count: collection.items.count)
            let snapshots = try collection.items.map { try client.item($0) }
            try client.forEachSecret(of: collection.items, session: session) { position, secret in
                let item = snapshots[position]
                items[position] = NewItem(label: item.label,
                                          attributes: item.attributes.filter { !$0.key.hasPrefix("gkr:compat:") },
                                          secret: secret, times: (item.created, item.modified))
            }
            let read = items.compactMap { $0 }
            let missing = items.count - read.count
            result.append(ProviderCollection(path: path, label: collection.label, id: id, items: missing == 0 ? read : nil,
                                             problem: missing == 0 ? nil : "the provider gave no secret for \(missing) of its \(items.count) items"))
        }
        return result
    }
}
