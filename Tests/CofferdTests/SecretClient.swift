import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import Testing

/// Well-known paths and interfaces of the Secret Service.
enum SS {
    static let service: ObjectPath = "/org/freedesktop/secrets"
    static let collections: ObjectPath = "/org/freedesktop/secrets/collection"
    static let login: ObjectPath = "/org/freedesktop/secrets/collection/login"
    static let sessionCollection: ObjectPath = "/org/freedesktop/secrets/collection/session"
    static let defaultAlias: ObjectPath = "/org/freedesktop/secrets/aliases/default"
    static let none: ObjectPath = "/"

    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"
    static let promptInterface = "org.freedesktop.Secret.Prompt"
    static let gnomeInterface = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"

    static let dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    static let itemLabel = "org.freedesktop.Secret.Item.Label"
    static let itemAttributes = "org.freedesktop.Secret.Item.Attributes"
    static let itemType = "org.freedesktop.Secret.Item.Type"
    static let collectionLabel = "org.freedesktop.Secret.Collection.Label"
}

/// A signal the client saw (broadcast from the daemon, or unicast to it).
struct ReceivedSignal: Sendable, CustomStringConvertible {
    let path: ObjectPath
    let interface: String
    let member: String
    let arguments: [DBusValue]
    let destination: String?

    var description: String { "\(interface).\(member) at \(path.rawValue) \(arguments)" }
    /// The first argument as an object path (CollectionCreated, ItemCreated, …).
    var objectArgument: ObjectPath? { arguments.first?.objectPath }
}

/// A transfer session the client opened: plain, or DH with the derived AES key.
struct ClientSession: @unchecked Sendable {
    let path: ObjectPath
    let key: SecureBytes?
    /// For DH: whether the shared secret S had a leading zero byte (the padding case).
    let sharedSecretHadLeadingZero: Bool
}

/// How the client sends its DH public key.
enum PublicKeyEncoding { case padded, minimal, extraZeros }

/// A Secret Service client over DBusKit, with its own connection and loop. It records every
/// signal under /org/freedesktop/secrets that reaches it.
final class SecretClient: @unchecked Sendable {
    let connection: DBusConnection
    private let loop: LoopThread
    let signals = Mutex<[ReceivedSignal]>([])
    private var closed = false

    init(address: String) throws {
        connection = try DBusConnection(address: address)
        loop = LoopThread(connection)
        connection.addSignalHandler(SignalRule()) { [weak self] message in
            guard let self, let path = message.path, path.isInside(SS.service), let interface = message.interface,
                  let member = message.member else { return }
            let received = ReceivedSignal(path: path, interface: interface, member: member,
                                          arguments: (try? message.arguments()) ?? [], destination: message.destination)
            self.signals.withLock { $0.append(received) }
        }
        // The daemon's signals reach this client from here on, with the handler in place.
        do {
            try connection.addMatch("type='signal',sender='\(DaemonFixture.busName)'")
        } catch {
            close()
            throw error
        }
    }

    var uniqueName: String { connection.uniqueName }

    func close() {
        guard !closed else { return }
        closed = true
        loop.stop()
        connection.close()
    }

    // MARK: Calls

    @discardableResult
    func call(_ path: ObjectPath, _ interface: String?, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = .seconds(25)) throws -> [DBusValue] {
        try connection.call(destination: DaemonFixture.busName, path: path, interface: interface, member: member,
                            arguments: arguments, timeout: timeout)
    }

    @discardableResult
    func service(_ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try call(SS.service, SS.serviceInterface, member, arguments)
    }

    func get(_ path: ObjectPath, _ interface: String, _ name: String) throws -> DBusValue {
        let reply = try call(path, SS.properties, "Get", [.string(interface), .string(name)])
        return try #require(reply.first?.variantValue, "Get returned \(reply)")
    }

    func set(_ path: ObjectPath, _ interface: String, _ name: String, _ value: DBusValue) throws {
        try call(path, SS.properties, "Set", [.string(interface), .string(name), .variant(value)])
    }

    func getAll(_ path: ObjectPath, _ interface: String) throws -> [String: DBusValue] {
        let reply = try call(path, SS.properties, "GetAll", [.string(interface)])
        return try #require(reply.first?.variantDictionary, "GetAll returned \(reply)")
    }

    func introspect(_ path: ObjectPath) throws -> String {
        try #require(try call(path, SS.introspectable, "Introspect").first?.string)
    }

    // MARK: Sessions

    func openPlain() throws -> ClientSession {
        let reply = try service("OpenSession", [.string("plain"), .variant(.string(""))])
        let path = try #require(reply.last?.objectPath)
        return ClientSession(path: path, key: nil, sharedSecretHadLeadingZero: false)
    }

    func openDH(encoding: PublicKeyEncoding = .padded) throws -> ClientSession {
        let pair = try DHKeyPair()
        var publicKey = pair.publicKey
        switch encoding {
        case .padded: break
        case .minimal: publicKey = Array(publicKey.drop { $0 == 0 })
        case .extraZeros: publicKey = [0, 0, 0] + publicKey
        }
        let reply = try service("OpenSession", [.string(SS.dh), .variant(.bytes(publicKey))])
        #expect(reply.count == 2)
        let serverKey = try #require(reply.first?.variantValue?.bytes, "DH output must be a variant of ay: \(reply)")
        #expect(serverKey.count <= 128 && !serverKey.isEmpty)
        let path = try #require(reply.last?.objectPath)
        let shared = try pair.sharedSecret(peerPublicKey: serverKey)
        let key = try SecretServiceKey.derive(sharedSecret: shared)
        return ClientSession(path: path, key: key, sharedSecretHadLeadingZero: shared[0] == 0)
    }

    func closeSession(_ session: ClientSession) throws {
        try call(session.path, SS.sessionInterface, "Close")
    }

    /// The `(oayays)` struct carrying `bytes` for `session`.
    func encode(_ bytes: [UInt8], contentType: String = "text/plain", session: ClientSession) throws -> DBusValue {
        guard let key = session.key else {
            return .structure([.objectPath(session.path), .bytes([]), .bytes(bytes), .string(contentType)])
        }
        let iv = Random.bytes(AES128CBC.blockLength)
        let sealed = try AES128CBC.encrypt(try SecureBytes(bytes), key: key, iv: iv)
        return .structure([.objectPath(session.path), .bytes(iv), .bytes(sealed), .string(contentType)])
    }

    func encode(_ text: String, session: ClientSession) throws -> DBusValue {
        try encode(Array(text.utf8), session: session)
    }

    /// Opens a `(oayays)` struct the service sent for `session`; checks its session path.
    func decode(_ value: DBusValue, session: ClientSession,
                sourceLocation: SourceLocation = #_sourceLocation) throws -> (bytes: [UInt8], contentType: String) {
        let fields = try #require(value.structureFields, "not a secret struct: \(value)", sourceLocation: sourceLocation)
        try #require(fields.count == 4, sourceLocation: sourceLocation)
        #expect(fields[0].objectPath == session.path, "secret names session \(fields[0])", sourceLocation: sourceLocation)
        let parameters = try #require(fields[1].bytes, sourceLocation: sourceLocation)
        let value = try #require(fields[2].bytes, sourceLocation: sourceLocation)
        let contentType = try #require(fields[3].string, sourceLocation: sourceLocation)
        guard let key = session.key else {
            #expect(parameters.isEmpty, "plain secrets carry no parameters", sourceLocation: sourceLocation)
            return (value, contentType)
        }
        #expect(parameters.count == 16, "IV must be 16 bytes", sourceLocation: sourceLocation)
        let plain = try AES128CBC.decrypt(value, key: key, iv: parameters)
        return (plain.unprotectedArray(0..<plain.count), contentType)
    }

    // MARK: Items and collections

    /// `CreateItem` on `collection`; expects no prompt and returns the item path.
    @discardableResult
    func createItem(in collection: ObjectPath = SS.login, label: String, attributes: [String: String],
                    secret: [UInt8], contentType: String = "text/plain", session: ClientSession,
                    replace: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws -> ObjectPath {
        let properties: [String: DBusValue] = [SS.itemLabel: .string(label),
                                               SS.itemAttributes: .stringDictionary(attributes)]
        let reply = try call(collection, SS.collectionInterface, "CreateItem",
                             [.variantDictionary(properties), try encode(secret, contentType: contentType, session: session),
                              .boolean(replace)])
        #expect(reply.count == 2 && reply[1].objectPath == SS.none, "CreateItem: \(reply)", sourceLocation: sourceLocation)
        return try #require(reply.first?.objectPath, sourceLocation: sourceLocation)
    }

    @discardableResult
    func createItem(in collection: ObjectPath = SS.login, label: String, attributes: [String: String],
                    secret: String, session: ClientSession, replace: Bool = false,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ObjectPath {
        try createItem(in: collection, label: label, attributes: attributes, secret: Array(secret.utf8),
                       session: session, replace: replace, sourceLocation: sourceLocation)
    }

    func getSecret(_ item: ObjectPath, session: ClientSession,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        let reply = try call(item, SS.itemInterface, "GetSecret", [.objectPath(session.path)])
        return try decode(try #require(reply.first, sourceLocation: sourceLocation), session: session,
                          sourceLocation: sourceLocation).bytes
    }

    /// `GetSecrets`: item path → secret bytes.
    func getSecrets(_ items: [ObjectPath], session: ClientSession) throws -> [ObjectPath: [UInt8]] {
        let reply = try service("GetSecrets", [.objectPathArray(items), .objectPath(session.path)])
        let entries = try #require(reply.first?.dictionaryEntries, "GetSecrets returned \(reply)")
        var result: [ObjectPath: [UInt8]] = [:]
        for entry in entries {
            let path = try #require(entry.key.objectPath)
            result[path] = try decode(entry.value, session: session).bytes
        }
        return result
    }

    func searchItems(_ attributes: [String: String]) throws -> (unlocked: [ObjectPath], locked: [ObjectPath]) {
        let reply = try service("SearchItems", [.stringDictionary(attributes)])
        try #require(reply.count == 2)
        return (try #require(reply[0].objectPathArray), try #require(reply[1].objectPathArray))
    }

    func collections() throws -> [ObjectPath] {
        try #require(try get(SS.service, SS.serviceInterface, "Collections").objectPathArray)
    }

    func items(of collection: ObjectPath) throws -> [ObjectPath] {
        try #require(try get(collection, SS.collectionInterface, "Items").objectPathArray)
    }

    func isLocked(_ path: ObjectPath, interface: String = SS.collectionInterface) throws -> Bool {
        let value = try get(path, interface, "Locked")
        guard let locked = value.bool else { throw DBusError.failed("Locked is not a boolean: \(value)") }
        return locked
    }

    func readAlias(_ name: String) throws -> ObjectPath {
        try #require(try service("ReadAlias", [.string(name)]).first?.objectPath)
    }

    // MARK: gnome-keyring's interface

    func createWithMasterPassword(label: String, password: String, session: ClientSession) throws -> ObjectPath {
        let reply = try call(SS.service, SS.gnomeInterface, "CreateWithMasterPassword",
                             [.variantDictionary([SS.collectionLabel: .string(label)]), try encode(password, session: session)])
        return try #require(reply.first?.objectPath)
    }

    func unlockWithMasterPassword(_ collection: ObjectPath, password: String, session: ClientSession) throws {
        try call(SS.service, SS.gnomeInterface, "UnlockWithMasterPassword",
                 [.objectPath(collection), try encode(password, session: session)])
    }

    func changeWithMasterPassword(_ collection: ObjectPath, from old: String, to new: String, session: ClientSession) throws {
        try call(SS.service, SS.gnomeInterface, "ChangeWithMasterPassword",
                 [.objectPath(collection), try encode(old, session: session), try encode(new, session: session)])
    }

    // MARK: Signals and prompts

    /// Forgets the signals seen so far.
    func clearSignals() { signals.withLock { $0 = [] } }

    /// Waits for a signal matching `member` (and `path`, `interface` when given), removing
    /// it from the record; nil after `timeout`.
    func waitForSignal(_ member: String, path: ObjectPath? = nil, interface: String? = nil,
                       timeout: TimeInterval = 10, where predicate: (ReceivedSignal) -> Bool = { _ in true }) -> ReceivedSignal? {
        var found: ReceivedSignal?
        _ = eventually(timeout: timeout) {
            found = signals.withLock { list -> ReceivedSignal? in
                guard let index = list.firstIndex(where: {
                    $0.member == member && (path == nil || $0.path == path) && (interface == nil || $0.interface == interface)
                        && predicate($0)
                }) else { return nil }
                return list.remove(at: index)
            }
            return found != nil
        }
        return found
    }

    /// The signals seen so far that match.
    func seen(_ member: String, path: ObjectPath? = nil) -> [ReceivedSignal] {
        signals.withLock { $0 }.filter { $0.member == member && (path == nil || $0.path == path) }
    }

    /// Calls `Prompt("")` on `prompt` and waits for its `Completed`: (dismissed, result).
    func runPrompt(_ prompt: ObjectPath, timeout: TimeInterval = 30,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> (dismissed: Bool, result: DBusValue) {
        try call(prompt, SS.promptInterface, "Prompt", [.string("")])
        let completed = try #require(waitForSignal("Completed", path: prompt, interface: SS.promptInterface, timeout: timeout),
                                     "no Completed from \(prompt)", sourceLocation: sourceLocation)
        try #require(completed.arguments.count == 2, sourceLocation: sourceLocation)
        let dismissed = try #require(completed.arguments[0].bool as Bool?, sourceLocation: sourceLocation)
        let result = try #require(completed.arguments[1].variantValue, sourceLocation: sourceLocation)
        return (dismissed, result)
    }
}

extension SecretClient {
    /// An item with a DH session in one go: returns (item, session).
    func quickItem(_ label: String = "item", attributes: [String: String], secret: String,
                   in collection: ObjectPath = SS.login) throws -> ObjectPath {
        let session = try openDH()
        return try createItem(in: collection, label: label, attributes: attributes, secret: secret, session: session)
    }
}
