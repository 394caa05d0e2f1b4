import CofferTestSupport
import DBusKit
import Foundation
import Synchronization

/// One writer: its own connection, its own items (tagged with its name, so writers never touch
/// each other's), and a seeded sequence of writes, one at a time, each checked against its reply.
final class Writer: @unchecked Sendable {
    static let service: ObjectPath = "/org/freedesktop/secrets"
    static let login: ObjectPath = "/org/freedesktop/secrets/collection/login"
    static let defaultAlias: ObjectPath = "/org/freedesktop/secrets/aliases/default"
    static let tagAttribute = "torture"
    static let callTimeout: Duration = .seconds(10)

    /// The attribute value marking this writer's items.
    let tag: String
    private(set) var model = ItemModel()
    private var random: SeededGenerator
    private var nextSlot = 0
    private(set) var operations = 0
    private(set) var acknowledged = 0
    /// Writes whose reply never came because cofferd was killed.
    private(set) var unacknowledged = 0
    /// What went wrong while cofferd was running: refused calls, wrong replies.
    private(set) var failures: [String] = []

    init(index: Int, seed: UInt64) {
        tag = "w\(index)"
        random = SeededGenerator(seed: seed, stream: UInt64(index))
    }

    /// One change, as sent over D-Bus.
    private enum Write {
        case create(ItemState, replace: Bool, in: ObjectPath)
        /// CreateItem with `replace = true` and the attributes of the item at the path.
        case replace(ObjectPath, ItemState, in: ObjectPath)
        case setSecret(ObjectPath, ItemState)
        case setLabel(ObjectPath, ItemState)
        case setAttributes(ObjectPath, ItemState)
        case delete(ObjectPath)

        var pending: PendingWrite {
            switch self {
            case .create(let state, let replace, _): PendingWrite(path: nil, after: state, what: "CreateItem(replace: \(replace))")
            case .replace(let path, let state, _): PendingWrite(path: path, after: state, what: "CreateItem(replace: true)")
            case .setSecret(let path, let state): PendingWrite(path: path, after: state, what: "SetSecret")
            case .setLabel(let path, let state): PendingWrite(path: path, after: state, what: "Set Label")
            case .setAttributes(let path, let state): PendingWrite(path: path, after: state, what: "Set Attributes")
            case .delete(let path): PendingWrite(path: path, after: nil, what: "Delete")
            }
        }
    }

    /// Writes on a fresh connection to `address` until a call fails. A failure once `killed`
    /// is set is the kill's doing; any other is recorded in `failures`.
    func run(address: String, killed: borrowing Mutex<Bool>) {
        let connection: DBusConnection
        let session: ObjectPath
        do {
            connection = try DBusConnection(address: address)
            let reply = try call(connection, Self.service, "org.freedesktop.Secret.Service", "OpenSession",
                                 [.string("plain"), .variant(.string(""))])
            guard reply.count == 2, let path = reply[1].objectPath else { throw DBusError.failed("OpenSession replied \(reply)") }
            session = path
        } catch {
            if !killed.withLock({ $0 }) { failures.append("\(tag): opening a session failed while cofferd ran: \(error)") }
            return
        }
        defer { connection.close() }
        while true {
            let write = nextWrite()
            model.begin(write.pending)
            operations += 1
            do {
                let path = try perform(write, on: connection, session: session)
                model.acknowledge(at: path)
                acknowledged += 1
            } catch {
                if killed.withLock({ $0 }) {
                    unacknowledged += 1
                } else {
                    failures.append("\(tag): \(write.pending.what) failed while cofferd ran: \(error)")
                }
                return
            }
        }
    }

    /// Checks this writer's items against `actual` (the store's items carrying this writer's tag).
    func reconcile(with actual: [ObjectPath: ItemState]) -> ItemModel.Findings {
        model.reconcile(with: actual)
    }

    // MARK: Choosing writes

    private func nextWrite() -> Write {
        let items = model.items.sorted { $0.key < $1.key }
        let collection = random.chance(0.5) ? Self.login : Self.defaultAlias
        guard let (path, current) = items.randomElement(using: &random), !random.chance(items.count < 8 ? 0.5 : 0.15) else {
            return .create(newItem(), replace: random.chance(0.3), in: collection)
        }
        var changed = current
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case ..<25 where items.count > 40, 80...:
            return .delete(path)
        case ..<25:
            changed.label = random.text(maxLength: 40)
            (changed.secret, changed.contentType) = newSecret()
            return .replace(path, changed, in: collection)
        case ..<50:
            (changed.secret, changed.contentType) = newSecret()
            return .setSecret(path, changed)
        case ..<65:
            changed.label = random.text(maxLength: 60)
            return .setLabel(path, changed)
        default:
            changed.attributes = attributes(slot: current.attributes["slot"] ?? "?")
            return .setAttributes(path, changed)
        }
    }

    /// A new item with a slot of its own, so that its attributes match no other item's.
    private func newItem() -> ItemState {
        nextSlot += 1
        let (secret, contentType) = newSecret()
        return ItemState(label: random.text(maxLength: 40), attributes: attributes(slot: "\(nextSlot)"),
                         secret: secret, contentType: contentType)
    }

    /// This writer's tag, the slot, and up to three random attributes.
    private func attributes(slot: String) -> [String: String] {
        var attributes = [Self.tagAttribute: tag, "slot": slot]
        for n in 0..<Int.random(in: 0...3, using: &random) {
            attributes["extra\(n)"] = random.text(maxLength: 30)
        }
        return attributes
    }

    /// Mostly small secrets, sometimes up to 32 KiB (so that the store compacts now and then).
    private func newSecret() -> ([UInt8], String) {
        let size = random.chance(0.12) ? Int.random(in: 1024...32768, using: &random) : Int.random(in: 0...200, using: &random)
        let contentType = random.chance(0.5) ? "text/plain" : "application/octet-stream"
        return (random.bytes(size), contentType)
    }

    // MARK: Sending writes

    /// Sends `write` and checks its reply; returns the path that now holds the written state.
    private func perform(_ write: Write, on connection: DBusConnection, session: ObjectPath) throws -> ObjectPath {
        let item = "org.freedesktop.Secret.Item"
        switch write {
        case .create(let state, let replace, let collection):
            let path = try createItem(state, replace: replace, in: collection, on: connection, session: session)
            if model.items[path] != nil { failures.append("\(tag): CreateItem returned \(path), which holds another item") }
            return path
        case .replace(let target, let state, let collection):
            let path = try createItem(state, replace: true, in: collection, on: connection, session: session)
            if path != target { failures.append("\(tag): CreateItem(replace: true) on the attributes of \(target) returned \(path)") }
            return path
        case .setSecret(let path, let state):
            try expect([], call(connection, path, item, "SetSecret", [Self.secret(state, session: session)]))
            return path
        case .setLabel(let path, let state):
            try setProperty("Label", .string(state.label), of: path, on: connection)
            return path
        case .setAttributes(let path, let state):
            try setProperty("Attributes", .stringDictionary(state.attributes), of: path, on: connection)
            return path
        case .delete(let path):
            try expect([.objectPath(.root)], call(connection, path, item, "Delete"))
            return path
        }
    }

    private func createItem(_ state: ItemState, replace: Bool, in collection: ObjectPath,
                            on connection: DBusConnection, session: ObjectPath) throws -> ObjectPath {
        let properties: [String: DBusValue] = [
            "org.freedesktop.Secret.Item.Label": .string(state.label),
            "org.freedesktop.Secret.Item.Attributes": .stringDictionary(state.attributes),
        ]
        let reply = try call(connection, collection, "org.freedesktop.Secret.Collection", "CreateItem",
                             [.variantDictionary(properties), Self.secret(state, session: session), .boolean(replace)])
        guard reply.count == 2, let path = reply[0].objectPath, path.isInside(Self.login), reply[1] == .objectPath(.root) else {
            throw DBusError.failed("CreateItem replied \(reply)")
        }
        return path
    }

    private func setProperty(_ name: String, _ value: DBusValue, of path: ObjectPath, on connection: DBusConnection) throws {
        try expect([], call(connection, path, "org.freedesktop.DBus.Properties", "Set",
                            [.string("org.freedesktop.Secret.Item"), .string(name), .variant(value)]))
    }

    /// A `(oayays)` secret for a plain session.
    private static func secret(_ state: ItemState, session: ObjectPath) -> DBusValue {
        .structure([.objectPath(session), .bytes([]), .bytes(state.secret), .string(state.contentType)])
    }

    private func call(_ connection: DBusConnection, _ path: ObjectPath, _ interface: String, _ member: String,
                      _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try connection.call(destination: TortureDaemon.busName, path: path, interface: interface, member: member,
                            arguments: arguments, timeout: Self.callTimeout)
    }

    private func expect(_ expected: [DBusValue], _ reply: [DBusValue]) throws {
        guard reply == expected else { throw DBusError.failed("unexpected reply \(reply)") }
    }
}
