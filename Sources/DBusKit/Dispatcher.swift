internal import CDBus
import Synchronization

/// Routes every incoming message (from the libdbus filter, on the loop thread): bus signals
/// about names, user signal handlers, and method calls for the object server.
final class Dispatcher {
    weak var connection: DBusConnection?
    var objectServer: ObjectServer? {
        get { state.withLock { $0.server } }
        set { state.withLock { $0.server = newValue } }
    }

    struct SignalSubscription {
        let id: UInt64
        let rule: SignalRule
        let handler: @Sendable (DBusMessage) -> Void
    }

    /// The handlers, added from any thread and, as always, run only on the loop thread.
    private struct State: Sendable {
        weak var server: ObjectServer?
        var subscriptions: [SignalSubscription] = []
        var vanishedHandlers: [(id: UInt64, handler: @Sendable (String) -> Void)] = []
        var nameLostHandlers: [(id: UInt64, handler: @Sendable (String) -> Void)] = []
        var nextID: UInt64 = 1
    }
    private let state = Mutex(State())

    func addSubscription(_ rule: SignalRule, _ handler: @escaping @Sendable (DBusMessage) -> Void) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.subscriptions.append(SignalSubscription(id: id, rule: rule, handler: handler))
            return id
        }
    }

    func addVanishedHandler(_ handler: @escaping @Sendable (String) -> Void) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.vanishedHandlers.append((id, handler))
            return id
        }
    }

    func addNameLostHandler(_ handler: @escaping @Sendable (String) -> Void) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.nameLostHandlers.append((id, handler))
            return id
        }
    }

    func remove(_ id: UInt64) {
        state.withLock { s in
            s.subscriptions.removeAll { $0.id == id }
            s.vanishedHandlers.removeAll { $0.id == id }
            s.nameLostHandlers.removeAll { $0.id == id }
        }
    }

    /// Returns true when the message was consumed.
    func handle(_ raw: OpaquePointer) -> Bool {
        guard let connection else { return false }
        let type = dbus_message_get_type(raw)
        if type == DBUS_MESSAGE_TYPE_METHOD_CALL {
            guard let server = objectServer else { return false }
            server.handle(DBusMessage(borrowing: raw))
            return true
        }
        guard type == DBUS_MESSAGE_TYPE_SIGNAL else { return false }
        let message = DBusMessage(borrowing: raw)
        if message.sender == "org.freedesktop.DBus", message.interface == "org.freedesktop.DBus" {
            handleBusSignal(message, connection: connection)
        }
        let subscriptions = state.withLock { $0.subscriptions }
        if !subscriptions.isEmpty {
            let header = SignalHeader(message)
            for s in subscriptions where s.rule.matches(header) { s.handler(message) }
        }
        return false
    }

    private func handleBusSignal(_ message: DBusMessage, connection: DBusConnection) {
        switch message.member {
        case "NameOwnerChanged":
            guard let args = try? message.arguments(), args.count == 3,
                  let name = args[0].string, let newOwner = args[2].string,
                  newOwner.isEmpty, name.hasPrefix(":") else { return }
            connection.forgetUID(name)
            let handlers = state.withLock { $0.vanishedHandlers }
            for h in handlers { h.handler(name) }
        case "NameLost":
            guard message.destination == nil || message.destination == connection.uniqueName,
                  let name = (try? message.arguments())?.first?.string else { return }
            let handlers = state.withLock { $0.nameLostHandlers }
            for h in handlers { h.handler(name) }
        default:
            return
        }
    }
}

/// The header fields a signal rule looks at, read once per message.
package struct SignalHeader {
    package let path: ObjectPath?
    package let interface: String?
    package let member: String?
    let sender: String?

    package init(_ m: DBusMessage) {
        path = m.path
        interface = m.interface
        member = m.member
        sender = m.sender
    }
}
