import DBusKit
import Foundation

/// Echoes its arguments back: one method `Echo<n>` per signature given.
struct EchoObject: DBusObject {
    let interfaces: [InterfaceDescription]

    init(signatures: [Signature]) {
        let methods = signatures.enumerated().map { index, sig in
            let args = sig.completeTypes.enumerated().map { ArgumentDescription("arg\($0.offset)", $0.element) }
            return MethodDescription("Echo\(index)", in: args, out: args)
        }
        interfaces = [InterfaceDescription(testInterface, methods: methods)]
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        .reply(call.arguments)
    }
}

/// An item-like object with properties of each access kind, a slow (deferred) method, a fast
/// method, a failing method, and a method that answers with a wrongly typed reply.
final class ItemObject: DBusObject, @unchecked Sendable {
    static let interface = InterfaceDescription(
        "org.coffer.Item",
        methods: [
            MethodDescription("Ping", out: [ArgumentDescription("pong", .string)]),
            MethodDescription("Slow", in: [ArgumentDescription("delay_ms", .uint32)],
                              out: [ArgumentDescription("thread_was_loop", .boolean)]),
            MethodDescription("Fail", in: [ArgumentDescription("name", .string)]),
            MethodDescription("BadReply", out: [ArgumentDescription("x", .string)]),
            MethodDescription("CallerUID", out: [ArgumentDescription("uid", .uint32)]),
            MethodDescription("Forget"),
        ],
        properties: [
            PropertyDescription("Label", .string, access: .readWrite),
            PropertyDescription("Attributes", .stringDictionary, access: .readWrite),
            PropertyDescription("Created", .uint64),
            PropertyDescription("Secret", .string, access: .write),
        ],
        signals: [SignalDescription("Changed", [ArgumentDescription("item", .objectPath)])])

    let interfaces = [ItemObject.interface]
    let path: ObjectPath
    var label: String
    var attributes: [String: String] = ["app": "coffer"]
    var secret = ""

    init(path: ObjectPath, label: String) {
        self.path = path
        self.label = label
    }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        switch call.member {
        case "Ping":
            return .reply([.string("pong from \(path)")])
        case "Slow":
            let delay = call.arguments[0].uint32 ?? 0
            // Finish on another thread, as a slow KDF would.
            Thread.detachNewThread {
                usleep(delay * 1000)
                call.reply([.boolean(false)])
            }
            return .deferred
        case "Fail":
            throw DBusError(name: call.arguments[0].string ?? "", message: "failed on purpose")
        case "BadReply":
            return .reply([.uint32(7)])
        case "CallerUID":
            return .reply([.uint32(try call.senderUID())])
        case "Forget":
            return .deferred   // never answered: the server must answer Failed when released
        default:
            throw DBusError.unknownMethod(call.member)
        }
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        switch name {
        case "Label": return .string(label)
        case "Attributes": return .stringDictionary(attributes)
        case "Created": return .uint64(1_700_000_000)
        default: throw DBusError.unknownProperty(name)
        }
    }

    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        switch name {
        case "Label":
            label = value.string ?? ""
            try call.connection.emitPropertiesChanged(path: path, interface: interface,
                                                      changed: ["Label": value])
        case "Attributes":
            attributes = value.stringDictionary ?? [:]
        case "Secret":
            // Stored later on another thread, as a durable write is: "refuse" is refused there.
            let secret = value.string ?? ""
            Thread.detachNewThread { [self] in
                usleep(20_000)
                guard secret != "refuse" else { return call.fail(DBusError(name: DBusError.Name.accessDenied, message: "refused")) }
                self.secret = secret
                call.reply([])
            }
            return .deferred
        default:
            throw DBusError.unknownProperty(name)
        }
        return .empty
    }
}

/// A small Secret-Service-shaped tree: /org/coffer/items/<escaped label> objects created on demand
/// for ids 0..<count (no per-object registration).
final class ItemTree: DBusObjectTree, @unchecked Sendable {
    static let prefix: ObjectPath = "/org/coffer"
    let count: Int
    private var cache: [ObjectPath: ItemObject] = [:]

    init(count: Int) { self.count = count }

    func path(of index: Int) -> ObjectPath {
        ItemTree.prefix.appending(escaping: "items").appending(escaping: "item-\(index)")
    }

    func object(at path: ObjectPath) -> (any DBusObject)? {
        if path == ItemTree.prefix { return RootObject() }
        let e = path.elements
        guard e.count == 4, e[2] == "items", let name = ObjectPath.unescapeElement(e[3]),
              name.hasPrefix("item-"), let index = Int(name.dropFirst(5)), index >= 0, index < count else { return nil }
        if let cached = cache[path] { return cached }
        let item = ItemObject(path: path, label: name)
        cache[path] = item
        return item
    }

    func childNames(of path: ObjectPath) -> [String] {
        if path == ItemTree.prefix { return ["items"] }
        if path == ItemTree.prefix.appending(escaping: "items") {
            return (0..<min(count, 50)).map { self.path(of: $0).lastElement! }
        }
        return []
    }
}

/// The object at the prefix itself.
struct RootObject: DBusObject {
    static let interface = InterfaceDescription("org.coffer.Root", properties: [
        PropertyDescription("Version", .string),
    ])
    var interfaces: [InterfaceDescription] { [RootObject.interface] }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        .string("1.0")
    }
}
