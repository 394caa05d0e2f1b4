import DBusKit

/// The errors of the Secret Service, shared by the server (which sends them) and clients (which
/// recognize them): each case carries its D-Bus error name.
public enum SecretServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The collection or item is locked; unlock it first.
    case isLocked(String)
    /// The session does not exist or belongs to another client.
    case noSession(String)
    /// No object at that path.
    case noSuchObject(String)
    /// The item or collection exists already.
    case alreadyExists(String)
    /// gnome-keyring's error for a wrong password.
    case denied(String)
    /// A per-client limit or a budget was reached.
    case limitsExceeded(String)

    /// The D-Bus error names, as clients (libsecret, SecretStorage, keyring) look for them.
    public enum Name {
        public static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
        public static let noSession = "org.freedesktop.Secret.Error.NoSession"
        public static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
        public static let alreadyExists = "org.freedesktop.Secret.Error.AlreadyExists"
        public static let denied = "org.gnome.keyring.Error.Denied"
        public static let limitsExceeded = DBusError.Name.limitsExceeded
    }

    /// The error a D-Bus error reply stands for, or nil if it is none of these.
    public init?(_ error: DBusError) {
        switch error.name {
        case Name.isLocked: self = .isLocked(error.message)
        case Name.noSession: self = .noSession(error.message)
        case Name.noSuchObject: self = .noSuchObject(error.message)
        case Name.alreadyExists: self = .alreadyExists(error.message)
        case Name.denied: self = .denied(error.message)
        case Name.limitsExceeded: self = .limitsExceeded(error.message)
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .isLocked: Name.isLocked
        case .noSession: Name.noSession
        case .noSuchObject: Name.noSuchObject
        case .alreadyExists: Name.alreadyExists
        case .denied: Name.denied
        case .limitsExceeded: Name.limitsExceeded
        }
    }

    public var message: String {
        switch self {
        case .isLocked(let m), .noSession(let m), .noSuchObject(let m), .alreadyExists(let m), .denied(let m),
             .limitsExceeded(let m): m
        }
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}

extension SecretServiceError: DBusErrorConvertible {
    public var dbusError: DBusError { DBusError(name: name, message: message) }
}
