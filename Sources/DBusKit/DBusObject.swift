/// An object served on the bus, resolved per call by a `DBusObjectTree`.
///
/// Implement `interfaces` (static descriptions) and `handleMethod` (switch over
/// `call.interface`/`call.member`). Properties are read through `getProperty` and written through
/// `setProperty`; the server has already checked that the property exists, is readable/writable
/// and that a written value has the declared type. All calls happen on the loop thread.
///
/// The standard interfaces `org.freedesktop.DBus.Introspectable`, `.Properties` and `.Peer` are
/// provided by the server; do not list them.
public protocol DBusObject: Sendable {
    /// The interfaces this object implements.
    var interfaces: [InterfaceDescription] { get }

    /// Handles a call to one of the declared methods; arguments already match the method's
    /// in-signature. Return `.reply(values)` (must match the out-signature), `.deferred` to answer
    /// later through `call.reply`/`call.fail`, or throw (`DBusError`, a `DBusErrorConvertible`, or
    /// any error, sent as `Failed`).
    func handleMethod(_ call: MethodCall) throws -> MethodResult

    /// The current value of a readable property (must have the declared type).
    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue

    /// Stores a writable property; `value` has the declared type (variant already unwrapped).
    /// Return `.empty` once stored, or `.deferred` to answer later through `call.reply([])` /
    /// `call.fail`. Emitting PropertiesChanged is up to you.
    func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult
}

extension DBusObject {
    public func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        throw DBusError.unknownProperty("no property \(interface).\(name)")
    }

    public func setProperty(_ name: String, interface: String, value: DBusValue, call: MethodCall) throws -> MethodResult {
        throw DBusError.propertyReadOnly("property \(interface).\(name) is read-only")
    }

    public func handleMethod(_ call: MethodCall) throws -> MethodResult {
        throw DBusError.unknownMethod("no method \(call.interface).\(call.member)")
    }
}

/// What a method handler returns.
public enum MethodResult: Sendable {
    /// Reply now with these values.
    case reply([DBusValue])
    /// The handler kept the `MethodCall` and will call `reply`/`fail` on it later (from any thread).
    case deferred

    /// An empty reply.
    public static let empty = MethodResult.reply([])
}

/// Resolves object paths below a registered prefix to objects, dynamically (no per-object
/// registration, so it scales to any number of items).
public protocol DBusObjectTree: Sendable {
    /// The object at `path`, or nil if there is none. Called for every method call at or below
    /// the prefix, so keep it cheap.
    func object(at path: ObjectPath) -> (any DBusObject)?

    /// Names of the direct children of `path` (single path elements), for introspection only.
    /// Paths without an object but with children are answered as intermediate nodes.
    func childNames(of path: ObjectPath) -> [String]

    /// Why there is no object at `path` and what would make one, for the caller's
    /// `UnknownObject` error; nil says nothing more.
    func absence(at path: ObjectPath) -> String?
}

extension DBusObjectTree {
    public func childNames(of path: ObjectPath) -> [String] { [] }
    public func absence(at path: ObjectPath) -> String? { nil }
}

/// A `DBusObjectTree` made of two closures.
public struct ClosureObjectTree: DBusObjectTree {
    private let resolve: @Sendable (ObjectPath) -> (any DBusObject)?
    private let children: @Sendable (ObjectPath) -> [String]

    public init(object: @escaping @Sendable (ObjectPath) -> (any DBusObject)?,
                children: @escaping @Sendable (ObjectPath) -> [String] = { _ in [] }) {
        resolve = object
        self.children = children
    }

    public func object(at path: ObjectPath) -> (any DBusObject)? { resolve(path) }
    public func childNames(of path: ObjectPath) -> [String] { children(path) }
}
