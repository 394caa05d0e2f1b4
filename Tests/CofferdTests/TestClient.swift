import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Synchronization
import Testing

/// The paths the tests name most, from the protocol module's.
extension SecretPath {
    static let login = collection(named: "login")
    static let sessionCollection = collection(named: "session")
    static let defaultAlias = alias("default")

    static func alias(_ name: String) -> ObjectPath { aliases.appending(escaping: name) }
}

/// A test's client of cofferd: a `SecretServiceClient`, through which sessions, secrets and
/// every typed call go, on a connection that also records every signal it receives and sends
/// raw `DBusValue` arguments (the tests of hostile input).
///
/// The few helpers here only adapt the library to the tests (secrets as byte arrays, `login`
/// by default); what a client library should not have is the recording and the raw calls.
final class TestClient: @unchecked Sendable {
    let library: SecretServiceClient
    private let recorder: SignalRecorder

    init(address: String) throws {
        let connection = try DBusConnection(address: address)
        let recorder = SignalRecorder()
        connection.addSignalHandler(SignalRule()) { recorder.record($0) }
        do {
            try connection.addMatch("type='signal',sender='\(SecretServiceClient.busName)'")
        } catch {
            connection.close()
            throw error
        }
        self.recorder = recorder
        library = SecretServiceClient(connection: connection, receivesSignals: true)
    }

    var connection: DBusConnection { library.connection }
    var uniqueName: String { connection.uniqueName }

    private let closed = Mutex(false)

    func close() {
        guard !closed.withLock({ was in defer { was = true }; return was }) else { return }
        library.close()
    }

    // MARK: Calls

    /// A raw call: any arguments, the daemon's exact reply.
    @discardableResult
    func call(_ path: ObjectPath, _ interface: String?, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = DBusConnection.defaultTimeout) throws -> [DBusValue] {
        try connection.call(destination: library.destination, path: path, interface: interface, member: member,
                            arguments: arguments, timeout: timeout)
    }

    /// `M` called with raw arguments (of another signature, on purpose).
    @discardableResult
    func call<M: DBusMethod>(_ method: M.Type, on path: ObjectPath, arguments: [DBusValue]) throws -> [DBusValue] {
        try call(path, M.interface, M.name, arguments)
    }

    /// `M` called through the library.
    @discardableResult
    func call<M: DBusMethod>(_ method: M.Type, on path: ObjectPath = SecretPath.service, _ input: M.Input) throws -> M.Output {
        try library.call(M.self, on: path, input)
    }

    func introspect(_ path: ObjectPath) throws -> String {
        try #require(try call(path, StandardInterface.introspectable, "Introspect").first?.string)
    }

    // MARK: Secrets as bytes

    @discardableResult
    func createItem(in collection: ObjectPath = SecretPath.login, label: String, attributes: [String: String],
                    secret: [UInt8], contentType: String = "text/plain", session: ClientSession,
                    replace: Bool = false) throws -> ObjectPath {
        try library.createItem(in: collection, label: label, attributes: attributes, secret: try SecureBytes(secret),
                               contentType: contentType, replace: replace, session: session)
    }

    @discardableResult
    func createItem(in collection: ObjectPath = SecretPath.login, label: String, attributes: [String: String],
                    secret: String, session: ClientSession, replace: Bool = false) throws -> ObjectPath {
        try createItem(in: collection, label: label, attributes: attributes, secret: Array(secret.utf8),
                       session: session, replace: replace)
    }

    /// An item made with a session of its own.
    func quickItem(_ label: String = "item", attributes: [String: String], secret: String,
                   in collection: ObjectPath = SecretPath.login) throws -> ObjectPath {
        try createItem(in: collection, label: label, attributes: attributes, secret: secret, session: library.openSession())
    }

    func secretBytes(of item: ObjectPath, session: ClientSession) throws -> [UInt8] {
        try library.secret(of: item, session: session).bytes.unprotected
    }

    /// One `GetSecrets` call, whatever its size. Its reply is read into ordinary memory (many
    /// large secrets at once would not fit this process's secure memory); the session decodes
    /// each secret alone.
    func secrets(of items: [ObjectPath], session: ClientSession) throws -> [ObjectPath: [UInt8]] {
        let reply = try call(ServiceInterface.GetSecrets.self, on: SecretPath.service,
                             arguments: [.objectPathArray(items), .objectPath(session.path)])
        let entries = try #require(reply.first?.dictionaryEntries, "GetSecrets returned \(reply)")
        var result: [ObjectPath: [UInt8]] = [:]
        for entry in entries {
            let path = try #require(entry.key.objectPath)
            result[path] = try session.decode(try WireSecret(readWithoutLimit: entry.value)).bytes.unprotected
        }
        return result
    }

    /// Whether the collection (or item) at `path` is locked.
    func isLocked(_ path: ObjectPath, interface: String = CollectionInterface.name) throws -> Bool {
        try Bool(dbusValue: try library.property(CollectionInterface.Property.locked, of: interface, on: path))
    }

    func items(of collection: ObjectPath) throws -> [ObjectPath] {
        try [ObjectPath](dbusValue: try library.property(CollectionInterface.Property.items, of: CollectionInterface.name,
                                                         on: collection))
    }

    // MARK: Signals and prompts

    /// Every signal received so far (and not taken by `waitForSignal`).
    var signals: [ReceivedSignal] { recorder.all }

    /// Forgets the signals received so far.
    func clearSignals() { recorder.clear() }

    /// Waits for a signal matching `member` (and `path`, `interface`, `predicate`), taking it
    /// from the record; nil after `timeout`.
    func waitForSignal(_ member: String, path: ObjectPath? = nil, interface: String? = nil, timeout: TimeInterval = 10,
                       where predicate: (ReceivedSignal) -> Bool = { _ in true }) -> ReceivedSignal? {
        recorder.wait(timeout: timeout) { list in
            guard let index = list.firstIndex(where: {
                $0.member == member && (path == nil || $0.path == path) && (interface == nil || $0.interface == interface)
                    && predicate($0)
            }) else { return nil }
            return list.remove(at: index)
        }
    }

    /// Waits until `condition` holds for the signals received; false after `timeout`.
    func waitForSignals(timeout: TimeInterval = 10, until condition: ([ReceivedSignal]) -> Bool) -> Bool {
        recorder.wait(timeout: timeout) { condition($0) ? true : nil } ?? false
    }

    /// The signals received so far that match.
    func seen(_ member: String, path: ObjectPath? = nil) -> [ReceivedSignal] {
        signals.filter { $0.member == member && (path == nil || $0.path == path) }
    }

    /// Calls `Prompt("")` on `prompt` and waits for its `Completed`: whether it was dismissed and
    /// the result exactly as sent (the library's `complete(prompt:)` keeps neither for a
    /// dismissed prompt).
    func runPrompt(_ prompt: ObjectPath, timeout: TimeInterval = 30,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> (dismissed: Bool, result: DBusValue) {
        try call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        let completed = try #require(waitForSignal(PromptInterface.Signal.completed, path: prompt,
                                                   interface: PromptInterface.name, timeout: timeout),
                                     "no Completed from \(prompt)", sourceLocation: sourceLocation)
        try #require(completed.arguments.count == 2, sourceLocation: sourceLocation)
        let dismissed = try #require(completed.arguments[0].bool as Bool?, sourceLocation: sourceLocation)
        let result = try #require(completed.arguments[1].variantValue, sourceLocation: sourceLocation)
        return (dismissed, result)
    }

    // MARK: Other connections

    /// Records from now on every connection that joins or leaves the bus.
    func watchConnections() throws {
        try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
    }

    /// Closes `other` and waits until this client sees it leave the bus.
    /// cofferd hears of it before any call this client sends afterwards, and so has dropped its
    /// sessions and prompts by the time it answers one.
    func close(_ other: TestClient, timeout: TimeInterval = 10) throws -> Bool {
        let name = other.uniqueName
        try watchConnections()
        other.close()
        return waitForSignals(timeout: timeout) { signals in
            signals.contains { $0.member == "NameOwnerChanged" && $0.arguments == [.string(name), .string(name), .string("")] }
        }
    }

    /// Waits until every connection that joined since `watchConnections()` has left again, as
    /// this client sees it (and so, as for `close(_:)`, as cofferd sees it).
    func waitUntilWatchedConnectionsLeft(timeout: TimeInterval = 10) throws -> Bool {
        // A round trip to the bus: every join it announced before is in the record after it.
        _ = try connection.nameOwner("org.freedesktop.DBus")
        return waitForSignals(timeout: timeout) { signals in
            var present = Set<String>()
            for signal in signals where signal.member == "NameOwnerChanged" && signal.arguments.count == 3 {
                guard let name = signal.arguments[0].string, name.hasPrefix(":") else { continue }
                if signal.arguments[2] == .string("") { present.remove(name) } else { present.insert(name) }
            }
            return present.isEmpty
        }
    }
}

/// A signal a client received (broadcast by the daemon, or sent to it).
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

/// Every signal a connection receives, in order; waits wake as each one arrives.
private final class SignalRecorder: Sendable {
    private let received = Mutex<[ReceivedSignal]>([])
    /// Signalled once per signal recorded.
    private let arrived = DispatchSemaphore(value: 0)

    func record(_ message: DBusMessage) {
        guard let path = message.path, let interface = message.interface, let member = message.member else { return }
        let signal = ReceivedSignal(path: path, interface: interface, member: member,
                                    arguments: (try? message.arguments()) ?? [], destination: message.destination)
        received.withLock { $0.append(signal) }
        arrived.signal()
    }

    var all: [ReceivedSignal] { received.withLock { $0 } }

    func clear() { received.withLock { $0 = [] } }

    /// Waits until `check` finds what it looks for in the record (it may take it out); nil
    /// after `timeout`. (Several waiters share the wake-ups, so each also looks again every
    /// few milliseconds.)
    func wait<Found>(timeout: TimeInterval, _ check: (inout [ReceivedSignal]) -> Found?) -> Found? {
        let deadline = DispatchTime.now() + timeout
        while true {
            if let found = received.withLock({ check(&$0) }) { return found }
            guard DispatchTime.now() < deadline else { return nil }
            _ = arrived.wait(timeout: min(deadline, .now() + .milliseconds(5)))
        }
    }
}

extension SecureBytes {
    /// A test's text in secure memory.
    convenience init(_ text: String) throws { try self.init(Array(text.utf8)) }

    /// The bytes as an ordinary array, to compare.
    var unprotected: [UInt8] { unprotectedArray(0..<count) }
}

extension WireSecret {
    /// A secret read from a reply without the secret limit (its value an ordinary array).
    init(readWithoutLimit value: DBusValue) throws {
        guard case .structure(var fields) = value, fields.count == 4, case .bytes(let bytes) = fields[2] else {
            throw DBusError.invalidArgs("not a secret: \(value)")
        }
        fields[2] = .secureBytes(try SecureBytes(bytes))
        try self.init(dbusValue: .structure(fields))
    }
}

extension ServiceInterface.SearchItems.Output {
    /// Nothing found, locked or not.
    var isEmpty: Bool { unlocked.isEmpty && locked.isEmpty }
}
