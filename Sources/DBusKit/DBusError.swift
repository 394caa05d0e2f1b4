/// A D-Bus error: a well-known error name plus a human-readable message.
///
/// Thrown by every failing DBusKit operation, and the way a method handler answers with an
/// error reply: `throw DBusError.invalidArgs("…")` or `throw DBusError(name: "org.freedesktop.Secret.Error.IsLocked", message: "…")`.
/// An error reply received from a peer is thrown as a `DBusError` with the peer's name and message.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, e.g. `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: String
    /// Human-readable explanation (may be empty).
    public var message: String

    public init(name: String, message: String = "") {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Standard error names of the `org.freedesktop.DBus.Error` namespace.
    public enum Name {
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    }

    public static func failed(_ message: String) -> DBusError { .init(name: Name.failed, message: message) }
    public static func invalidArgs(_ message: String) -> DBusError { .init(name: Name.invalidArgs, message: message) }
    public static func unknownMethod(_ message: String) -> DBusError { .init(name: Name.unknownMethod, message: message) }
    public static func unknownObject(_ message: String) -> DBusError { .init(name: Name.unknownObject, message: message) }
    public static func unknownInterface(_ message: String) -> DBusError { .init(name: Name.unknownInterface, message: message) }
    public static func unknownProperty(_ message: String) -> DBusError { .init(name: Name.unknownProperty, message: message) }
    public static func propertyReadOnly(_ message: String) -> DBusError { .init(name: Name.propertyReadOnly, message: message) }
    public static func notSupported(_ message: String) -> DBusError { .init(name: Name.notSupported, message: message) }
    public static func accessDenied(_ message: String) -> DBusError { .init(name: Name.accessDenied, message: message) }
    public static func noReply(_ message: String) -> DBusError { .init(name: Name.noReply, message: message) }
    public static func serviceUnknown(_ message: String) -> DBusError { .init(name: Name.serviceUnknown, message: message) }
    public static func disconnected(_ message: String) -> DBusError { .init(name: Name.disconnected, message: message) }
    public static func limitsExceeded(_ message: String) -> DBusError { .init(name: Name.limitsExceeded, message: message) }
}

/// Adopt this on your own error types to choose the D-Bus error a method handler's `throw`
/// turns into. Errors that are neither `DBusError` nor `DBusErrorConvertible` become
/// `org.freedesktop.DBus.Error.Failed` with their `String(describing:)` as message.
public protocol DBusErrorConvertible: Error {
    var dbusError: DBusError { get }
}

extension DBusError {
    /// Maps any error to the `DBusError` sent over the bus (see `DBusErrorConvertible`).
    public init(converting error: any Error) {
        if let e = error as? DBusError {
            self = e
        } else if let c = error as? any DBusErrorConvertible {
            self = c.dbusError
        } else {
            self = .failed(String(describing: error))
        }
    }
}
