import CofferCore
import DBusKit
import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service's bus name, interfaces and object paths, as a client sees them.
enum SecretBus {
    static let name = "org.freedesktop.secrets"
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    /// gnome-keyring's interface for password operations without a prompt (cofferd has it too).
    static let gnomeKeyring = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"
    static let properties = "org.freedesktop.DBus.Properties"

    static let servicePath: ObjectPath = "/org/freedesktop/secrets"
    static let collectionsPath: ObjectPath = "/org/freedesktop/secrets/collection"
    static let aliasesPath: ObjectPath = "/org/freedesktop/secrets/aliases"
    /// "No object": the empty prompt, an alias naming nothing.
    static let none: ObjectPath = "/"

    static func path(of id: CollectionID) -> ObjectPath {
        collectionsPath.appending(escaping: id.rawValue)
    }

    static func path(of reference: ItemReference) -> ObjectPath {
        path(of: reference.collection).appending(escaping: String(reference.item))
    }

    /// The collection at `…/collection/<id>`, if the id is one coffer can name.
    static func collectionID(at path: ObjectPath) -> CollectionID? {
        let elements = path.elements
        guard elements.count == 5, path.isInside(collectionsPath) else { return nil }
        return ObjectPath.unescapeElement(elements[4]).flatMap { CollectionID($0) }
    }

    /// The item at `…/collection/<id>/<item>`.
    static func reference(at path: ObjectPath) -> ItemReference? {
        let elements = path.elements
        guard elements.count == 6, let parent = path.parent, let collection = collectionID(at: parent),
              let item = ItemID(elements[5]) else { return nil }
        return ItemReference(collection: collection, item: item)
    }
}

/// A connection to whoever owns org.freedesktop.secrets, with the calls `DaemonKeychain`
/// makes: methods, and properties through org.freedesktop.DBus.Properties.
struct DaemonBus {
    let connection: DBusConnection

    /// Key derivations (Argon2id) run in the daemon: allow them time.
    static let passwordTimeout: Duration = .seconds(120)

    /// The session bus if it can be reached without starting anything, and someone owns
    /// org.freedesktop.secrets on it; nil otherwise (coffer then works on the files).
    static func connectIfRunning() -> DaemonBus? {
        let connection: DBusConnection
        if environment("DBUS_SESSION_BUS_ADDRESS") != nil {
            guard let bus = try? DBusConnection.sessionBus() else { return nil }
            connection = bus
        } else if let runtime = environment("XDG_RUNTIME_DIR"), isSocket(runtime + "/bus") {
            // What libdbus would use; never its X11 autolaunch, which could start a bus.
            guard let bus = try? DBusConnection(address: "unix:path=" + escapeAddressValue(runtime + "/bus")) else {
                return nil
            }
            connection = bus
        } else {
            return nil
        }
        guard let owner = try? connection.nameOwner(SecretBus.name), !owner.isEmpty else {
            connection.close()
            return nil
        }
        return DaemonBus(connection: connection)
    }

    func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> [DBusValue] {
        try connection.call(destination: SecretBus.name, path: path, interface: interface, member: member,
                            arguments: arguments, timeout: timeout)
    }

    func get(_ path: ObjectPath, _ interface: String, _ name: String) throws -> DBusValue {
        let reply = try call(path, SecretBus.properties, "Get", [.string(interface), .string(name)])
        guard let value = reply.first?.variantValue else { throw Self.unexpected("Get \(name)") }
        return value
    }

    func getAll(_ path: ObjectPath, _ interface: String) throws -> [String: DBusValue] {
        let reply = try call(path, SecretBus.properties, "GetAll", [.string(interface)])
        guard let values = reply.first?.variantDictionary else { throw Self.unexpected("GetAll") }
        return values
    }

    func set(_ path: ObjectPath, _ interface: String, _ name: String, _ value: DBusValue) throws(DBusError) {
        _ = try call(path, SecretBus.properties, "Set", [.string(interface), .string(name), .variant(value)])
    }

    /// The names of the aliases (children of …/aliases in the introspection data), or just
    /// `default` when the service does not list them.
    func aliasNames() -> [String] {
        guard let xml = try? call(SecretBus.aliasesPath, "org.freedesktop.DBus.Introspectable", "Introspect").first?.string else {
            return ["default"]
        }
        var names: Set<String> = ["default"]
        for piece in xml.split(separator: "<node name=\"").dropFirst() {
            guard let end = piece.firstIndex(of: "\""),
                  let name = ObjectPath.unescapeElement(String(piece[..<end])) else { continue }
            names.insert(name)
        }
        return names.sorted()
    }

    /// A reply that does not have the shape the Secret Service specifies.
    static func unexpected(_ what: String) -> CLIError {
        .storeFailure("the Secret Service gave an unexpected reply to \(what)")
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func isSocket(_ path: String) -> Bool {
        (try? FileStatus.of(path).kind) == .socket
    }

    /// A D-Bus address value: bytes other than `-0-9A-Za-z_/.*` as %xx.
    private static func escapeAddressValue(_ text: String) -> String {
        String(decoding: addressValueEscaping.encode(text.utf8), as: UTF8.self)
    }

    private static let addressValueEscaping = PercentEncoding(uppercase: false) { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "*")].contains(byte)
    }
}
