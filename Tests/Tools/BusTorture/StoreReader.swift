import CofferCore
import CofferCrypto
import DBusKit
import SecretServiceClient
import SecretServiceProtocol

/// Reads every item of `login` over D-Bus: label and attributes through the Properties
/// interface, secrets and content types through `GetSecrets` with a plain session.
enum StoreReader {
    static func readLogin(address: String) throws -> [ObjectPath: ItemState] {
        let client = SecretServiceClient(connection: try DBusConnection(address: address))
        defer { client.close() }
        let paths = try client.collection(Writer.login).items
        var secrets: [ObjectPath: Secret] = [:]
        try client.forEachSecret(of: paths, session: try client.openSession(.plain)) { secrets[paths[$0]] = $1 }
        var items: [ObjectPath: ItemState] = [:]
        for path in paths {
            let item = try client.item(path)
            guard let secret = secrets[path] else { throw DBusError.failed("GetSecrets left out \(path)") }
            items[path] = ItemState(label: item.label, attributes: item.attributes,
                                    secret: secret.bytes.unprotectedArray(0..<secret.bytes.count), contentType: secret.contentType)
        }
        return items
    }
}
