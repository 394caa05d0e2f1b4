import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import SecretServiceClient
import SecretServiceProtocol

/// One writer: its own connection, its own items (tagged with its name, so writers never touch
/// each other's), and a seeded sequence of writes, one at a time, each checked against its reply.
final class Writer: @unchecked Sendable {
    static let login = SecretPath.collection(named: "login")
    static let defaultAlias = SecretPath.aliases.appending(escaping: "default")
    static let tagAttribute = "torture"

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
        let client: SecretServiceClient
        let session: ClientSession
        do {
            client = SecretServiceClient(connection: try DBusConnection(address: address))
            do {
                session = try client.openSession(.plain)
            } catch {
                client.close()
                throw error
            }
        } catch {
            if !killed.withLock({ $0 }) { failures.append("\(tag): opening a session failed while cofferd ran: \(error)") }
            return
        }
        defer { client.close() }
        while true {
            let write = nextWrite()
            model.begin(write.pending)
            operations += 1
            do {
                let path = try perform(write, with: client, session: session)
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
    private func perform(_ write: Write, with client: SecretServiceClient, session: ClientSession) throws -> ObjectPath {
        switch write {
        case .create(let state, let replace, let collection):
            let path = try createItem(state, replace: replace, in: collection, with: client, session: session)
            if model.items[path] != nil { failures.append("\(tag): CreateItem returned \(path), which holds another item") }
            return path
        case .replace(let target, let state, let collection):
            let path = try createItem(state, replace: true, in: collection, with: client, session: session)
            if path != target { failures.append("\(tag): CreateItem(replace: true) on the attributes of \(target) returned \(path)") }
            return path
        case .setSecret(let path, let state):
            try client.setSecret(of: path, to: try SecureBytes(state.secret), contentType: state.contentType, session: session)
            return path
        case .setLabel(let path, let state):
            try client.setLabel(ofItem: path, to: state.label)
            return path
        case .setAttributes(let path, let state):
            try client.setAttributes(of: path, to: state.attributes)
            return path
        case .delete(let path):
            let prompt = try client.call(ItemInterface.Delete.self, on: path, NoArguments()).prompt
            guard prompt == SecretPath.none else { throw DBusError.failed("Delete asked for a prompt, \(prompt)") }
            return path
        }
    }

    /// CreateItem, checked: no prompt, and an item of `login` (also when named by its alias).
    private func createItem(_ state: ItemState, replace: Bool, in collection: ObjectPath,
                            with client: SecretServiceClient, session: ClientSession) throws -> ObjectPath {
        let input = CollectionInterface.CreateItem.Input(
            properties: .init(label: state.label, attributes: state.attributes),
            secret: try session.encode(try SecureBytes(state.secret), contentType: state.contentType), replace: replace)
        let reply = try client.call(CollectionInterface.CreateItem.self, on: collection, input)
        guard reply.item.isInside(Self.login), reply.prompt == SecretPath.none else {
            throw DBusError.failed("CreateItem replied \(reply.item), prompt \(reply.prompt)")
        }
        return reply.item
    }
}
