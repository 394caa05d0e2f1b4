// The yardstick column of coffer-bus-bench: the least a Secret Service provider can do for the
// benchmark's calls, run as a provider of its own (this program again, `--bare-provider DIR`) and
// measured exactly as cofferd and gnome-keyring are.
import CofferCrypto
import DBusKit
import Dispatch
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Synchronization
import SystemKit

/// Items in a dictionary with an index of attribute pairs; secrets decrypted from and encrypted
/// for the client's DH session; every change written as one 300-byte record and `fdatasync`ed
/// (the floor line's disk work) before its reply; the signals the specification asks for. No
/// encryption at rest, no access control, no audit log, no crash safety, all on the loop thread.
/// What it takes per call is what libdbus, dbus-daemon, the disk and the protocol's own messages
/// cost on this machine: a target that this column misses is out of reach of any provider here.
///
/// With `--flush-off-loop` (the column "bare provider, flush off the loop") it flushes as the
/// speed targets ask a provider to: on a writer thread, which replies once the write is durable,
/// so that no client waits behind another's flush; changes queued meanwhile share one flush.
/// A target this column misses is out of reach here of any provider built that way.
final class BareProvider: @unchecked Sendable {   // its state is used on its loop thread only
    struct Item {
        var label: String
        var attributes: [String: String]
        var secret: SecureBytes
        var contentType: String
    }

    static let collection = SecretPath.collections.appending(escaping: "bench")
    static let session = SecretPath.session(1)

    private let connection: DBusConnection
    private let disk: DurableProbe
    /// The writer thread, with `--flush-off-loop`.
    private let writer: Writer?
    private var items: [ObjectPath: Item] = [:]
    private var index: [String: Set<ObjectPath>] = [:]
    private var sessionKey: AES128CBCKey?
    private var created = 0

    /// `--bare-provider DIRECTORY`: serves `org.freedesktop.secrets` on the session bus until killed.
    static func run(_ arguments: [String]) -> Never {
        do {
            guard let directory = arguments.first else { throw BenchError("--bare-provider needs a directory") }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let connection = try DBusConnection.sessionBus()
            let disk = try DurableProbe(directory: directory)
            let provider = BareProvider(connection: connection, disk: disk,
                                        writer: arguments.contains("--flush-off-loop") ? Writer(disk: disk) : nil)
            connection.objectServer.register(prefix: SecretPath.service, tree: ClosureObjectTree { provider.object(at: $0) })
            _ = try connection.requestName(SecretServiceClient.busName, flags: [.doNotQueue])
            connection.run()
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("bare provider: \(error)\n".utf8))
            exit(1)
        }
    }

    private init(connection: DBusConnection, disk: DurableProbe, writer: Writer?) {
        self.connection = connection
        self.disk = disk
        self.writer = writer
    }

    /// Makes the change just made durable, then `reply`, then (on the loop) `announce`: all on
    /// the loop thread, or the first two on the writer thread with `--flush-off-loop`.
    private func flush(reply: @escaping @Sendable () -> Void, then announce: @escaping @Sendable () -> Void) {
        guard let writer else {
            disk.write()
            reply()
            return announce()
        }
        let connection = self.connection
        writer.submit {
            reply()
            connection.post(announce)
        }
    }

    /// One thread that flushes what is queued, once for all of it, and then runs each one's
    /// reply: how `CollectionWriter` takes Coffer's writes off the loop, without the store.
    final class Writer: @unchecked Sendable {   // `disk` is used on the writer thread only
        private let disk: DurableProbe
        private let pending = Mutex([@Sendable () -> Void]())
        private let queued = DispatchSemaphore(value: 0)

        init(disk: DurableProbe) {
            self.disk = disk
            Threads.start(name: "bare writer") { [self] in run() }
        }

        func submit(_ reply: @escaping @Sendable () -> Void) {
            pending.withLock { $0.append(reply) }
            queued.signal()
        }

        private func run() -> Never {
            while true {
                queued.wait()
                let replies = pending.withLock { replies in
                    defer { replies.removeAll() }
                    return replies
                }
                guard !replies.isEmpty else { continue }
                disk.write()
                for reply in replies { reply() }
            }
        }
    }

    private func object(at path: ObjectPath) -> (any DBusObject)? {
        if path == SecretPath.service { return Service(provider: self) }
        if path == Self.collection || path == SecretPath.aliases.appending(escaping: "default") { return Collection(provider: self) }
        return items[path] == nil ? nil : ItemObject(provider: self, path: path)
    }

    private static func term(_ key: String, _ value: String) -> String { key + "\u{0}" + value }

    // MARK: The calls

    fileprivate func openSession(_ input: ServiceInterface.OpenSession.Input) throws -> ServiceInterface.OpenSession.Output {
        guard case .bytes(let peer) = input.input.value else {
            sessionKey = nil
            return .init(output: .string(""), session: Self.session)
        }
        let pair = try DHKeyPair()
        sessionKey = try AES128CBCKey(try SecretServiceKey.derive(sharedSecret: try pair.sharedSecret(peerPublicKey: peer)))
        return .init(output: .bytes(pair.publicKey), session: Self.session)
    }

    fileprivate func search(_ attributes: [String: String]) -> [ObjectPath] {
        var found: Set<ObjectPath>?
        for (key, value) in attributes {
            let matching = index[Self.term(key, value)] ?? []
            found = found.map { $0.intersection(matching) } ?? matching
        }
        return Array(found ?? Set(items.keys))
    }

    private func decrypt(_ secret: WireSecret) throws -> SecureBytes {
        guard let sessionKey else { return secret.value }
        return try sessionKey.decrypt(secret.value, iv: secret.parameters)
    }

    fileprivate func create(_ input: CollectionInterface.CreateItem.Input) throws -> CollectionInterface.CreateItem.Output {
        let attributes = input.properties.attributes ?? [:]
        let item = Item(label: input.properties.label ?? "", attributes: attributes, secret: try decrypt(input.secret), contentType: input.secret.contentType)
        let existing = input.replace ? search(attributes).first { items[$0]?.attributes == attributes } : nil
        let path = existing ?? Self.collection.appending(escaping: "i\(created)")
        if existing == nil { created += 1 }
        items[path] = item
        for (key, value) in attributes { index[Self.term(key, value), default: []].insert(path) }
        return .init(item: path, prompt: SecretPath.none)
    }

    /// After the reply: ItemCreated and the collection's Items property.
    fileprivate func announce(_ member: String, _ path: ObjectPath) {
        try? connection.emitSignal(path: Self.collection, interface: CollectionInterface.name, member: member, arguments: [.objectPath(path)])
        if member != CollectionInterface.Signal.itemChanged {
            try? connection.emitPropertiesChanged(path: Self.collection, interface: CollectionInterface.name, changed: [:],
                                                  invalidated: [CollectionInterface.Property.items])
        }
    }

    fileprivate func getSecrets(_ paths: [ObjectPath], call: MethodCall) throws {
        let encryptor = try sessionKey?.encryptor()
        let ivs = encryptor == nil ? [] : Random.nonce(AES128CBC.blockLength * paths.count)
        try call.replyWithDictionary(keySignature: .objectPath, valueSignature: WireSecret.dbusType) { add in
            for (position, path) in paths.enumerated() {
                guard let item = items[path] else { continue }
                var wire = WireSecret(session: Self.session, parameters: [], value: item.secret, contentType: item.contentType)
                if let encryptor {
                    wire.parameters = Array(ivs[position * AES128CBC.blockLength ..< (position + 1) * AES128CBC.blockLength])
                    wire.value = try encryptor.seal(item.secret, iv: wire.parameters)
                }
                try add(.objectPath(path), wire.dbusValue)
            }
        }
    }

    fileprivate func setSecret(of path: ObjectPath, _ secret: WireSecret) throws {
        items[path]?.secret = try decrypt(secret)
        items[path]?.contentType = secret.contentType
    }

    fileprivate func setLabel(of path: ObjectPath, _ label: String) {
        items[path]?.label = label
    }

    fileprivate func delete(_ path: ObjectPath) {
        guard let item = items.removeValue(forKey: path) else { return }
        for (key, value) in item.attributes { index[Self.term(key, value)]?.remove(path) }
    }

    // MARK: The objects

    private struct Service: DBusObject {
        let provider: BareProvider
        var interfaces: [InterfaceDescription] { [ServiceInterface.description] }

        static let methods = MethodTable<Service>()
            .on(ServiceInterface.OpenSession.self) { object, input, _ in try object.provider.openSession(input) }
            .on(ServiceInterface.SearchItems.self) { object, input, _ in .init(unlocked: object.provider.search(input.attributes), locked: []) }
            .deferring(ServiceInterface.GetSecrets.self) { object, input, call in
                try object.provider.getSecrets(input.items, call: call)
                return .deferred
            }

        func handleMethod(_ call: MethodCall) throws -> MethodResult { try Self.methods.handle(call, on: self) }
    }

    private struct Collection: DBusObject {
        let provider: BareProvider
        var interfaces: [InterfaceDescription] { [CollectionInterface.description] }

        static let methods = MethodTable<Collection>()
            .deferring(CollectionInterface.CreateItem.self) { object, input, call in
                let provider = object.provider, output = try provider.create(input)
                provider.flush(reply: { call.reply(output.argumentValues) },
                               then: { provider.announce(CollectionInterface.Signal.itemCreated, output.item) })
                return .deferred
            }

        func handleMethod(_ call: MethodCall) throws -> MethodResult { try Self.methods.handle(call, on: self) }
    }

    private struct ItemObject: DBusObject {
        let provider: BareProvider
        let path: ObjectPath
        var interfaces: [InterfaceDescription] { [ItemInterface.description] }

        static let methods = MethodTable<ItemObject>()
            .deferring(ItemInterface.SetSecret.self) { object, input, call in
                let provider = object.provider, path = object.path
                try provider.setSecret(of: path, input.secret)
                provider.flush(reply: { call.reply([]) }, then: { provider.announce(CollectionInterface.Signal.itemChanged, path) })
                return .deferred
            }
            .deferring(ItemInterface.Delete.self) { object, _, call in
                let provider = object.provider, path = object.path
                provider.delete(path)
                provider.flush(reply: { call.reply(ItemInterface.Delete.Output(prompt: SecretPath.none).argumentValues) },
                               then: { provider.announce(CollectionInterface.Signal.itemDeleted, path) })
                return .deferred
            }

        func handleMethod(_ call: MethodCall) throws -> MethodResult { try Self.methods.handle(call, on: self) }

        func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
            guard name == ItemInterface.Property.label, case .string(let label) = value else {
                throw DBusError.propertyReadOnly("the bare provider changes labels only")
            }
            let provider = self.provider, path = self.path
            provider.setLabel(of: path, label)
            provider.flush(reply: { call.reply([]) }, then: { provider.announce(CollectionInterface.Signal.itemChanged, path) })
            return .deferred
        }
    }
}
