import CofferCrypto
import DBusKit
import SecretServiceProtocol
import Synchronization

/// A client of the Secret Service: whichever provider owns `org.freedesktop.secrets` (cofferd,
/// gnome-keyring, oo7, KeePassXC, KDE), or a given bus name.
///
/// Every call is typed (SecretServiceProtocol), every secret and password travels in secure
/// memory, prompts are run and awaited, and D-Bus errors come back as `DBusError` (use
/// `SecretServiceError(error)` to recognise the Secret Service's own). Calls are made on the
/// calling thread; the connection's loop runs on a thread of its own while a prompt is awaited
/// (to see its `Completed` signal), or for the client's lifetime with `receivesSignals`. Its
/// methods may be called from any thread.
///
/// ```swift
/// let client = try SecretServiceClient.connectToSessionBus()
/// let session = try client.openSession()
/// let login = try client.readAlias("default") ?? SecretPath.collection(named: "login")
/// let item = try client.createItem(in: login, label: "Git", attributes: ["service": "git"],
///                                  secret: try SecureBytes(Array("hunter2".utf8)), session: session)
/// let found = try client.search(["service": "git"]).unlocked
/// let secret = try client.secret(of: found[0], session: session)
/// try client.deleteItem(item)
/// ```
public final class SecretServiceClient: Sendable {
    /// The well-known name providers own.
    public static let busName = "org.freedesktop.secrets"
    /// Key derivations (Argon2id in cofferd) and prompts take time: calls that may need them
    /// wait this long.
    public static let slowCallTimeout: Duration = .seconds(120)

    public let connection: DBusConnection
    /// Whom calls go to: `busName`, or a unique name.
    public let destination: String
    /// The loop thread and how many are using it: `receivesSignals`, prompts being awaited.
    private let loop = Mutex<(thread: LoopThread?, users: Int)>((nil, 0))

    /// A client on `connection`, calling `destination`. With `receivesSignals`, the
    /// connection's loop runs for the client's lifetime, so that handlers the caller adds to
    /// `connection` see every signal (calls then pass through the loop thread); without, it
    /// runs only while a prompt is awaited, and a call costs no thread switch.
    public init(connection: DBusConnection, destination: String = SecretServiceClient.busName,
                receivesSignals: Bool = false) {
        self.connection = connection
        self.destination = destination
        if receivesSignals { startLoop() }
    }

    /// A client on the session bus; `DBusError` if there is none or nobody provides the
    /// Secret Service on it (nothing is started).
    public static func connectToSessionBus() throws(DBusError) -> SecretServiceClient {
        guard let connection = DBusConnection.runningSessionBus() else {
            throw .failed("no session bus is running (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist)")
        }
        guard let owner = try? connection.nameOwner(busName), !owner.isEmpty else {
            connection.close()
            throw DBusError(name: DBusError.Name.nameHasNoOwner, message: "nothing provides \(busName) on the session bus")
        }
        return SecretServiceClient(connection: connection)
    }

    /// Stops the loop thread and closes the connection (sessions end with it).
    public func close() {
        loop.withLock { loop in
            loop.thread?.stop()
            loop.thread = nil
        }
        connection.close()
    }

    // MARK: Calls

    /// Calls `M` on `path`; secrets in the reply go to secure memory.
    public func call<M: DBusMethod>(_ method: M.Type, on path: ObjectPath, _ input: M.Input,
                                    timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> M.Output {
        try connection.call(M.self, destination: destination, path: path, input,
                            replySecretLimit: WireSecret.replyLimit, timeout: timeout)
    }

    /// The property `name` of `interface` on `path`.
    public func property(_ name: String, of interface: String, on path: ObjectPath) throws(DBusError) -> DBusValue {
        let reply = try connection.call(destination: destination, path: path, interface: StandardInterface.properties,
                                        member: "Get", arguments: [.string(interface), .string(name)])
        guard reply.count == 1, case .variant(let value) = reply[0] else { throw Self.unexpected("Get \(name)") }
        return value
    }

    /// Every property of `interface` on `path`.
    public func properties(of interface: String, on path: ObjectPath) throws(DBusError) -> [String: DBusValue] {
        let reply = try connection.call(destination: destination, path: path, interface: StandardInterface.properties,
                                        member: "GetAll", arguments: [.string(interface)])
        guard reply.count == 1, let values = reply[0].variantDictionary else { throw Self.unexpected("GetAll") }
        return values
    }

    /// Sets the property `name` of `interface` on `path`.
    public func setProperty(_ name: String, of interface: String, on path: ObjectPath, to value: DBusValue) throws(DBusError) {
        _ = try connection.call(destination: destination, path: path, interface: StandardInterface.properties,
                                member: "Set", arguments: [.string(interface), .string(name), .variant(value)])
    }

    // MARK: The loop

    /// Runs the connection's loop on a thread unless it runs already; `stopLoop()` undoes it.
    func startLoop() {
        loop.withLock { loop in
            if loop.users == 0 { loop.thread = LoopThread(connection) }
            loop.users += 1
        }
    }

    /// Stops the loop thread once nobody uses it (holding the lock until it has left the loop:
    /// a connection runs one loop at a time).
    func stopLoop() {
        loop.withLock { loop in
            loop.users -= 1
            guard loop.users == 0 else { return }
            loop.thread?.stop()
            loop.thread = nil
        }
    }

    /// The provider answered with something the specification does not allow.
    static func unexpected(_ what: String) -> DBusError {
        .failed("the Secret Service gave an unexpected reply to \(what)")
    }
}
