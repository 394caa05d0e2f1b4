import CofferCore
import DBusKit

/// The error names Secret Service clients look for.
enum SecretError {
    static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
    static let noSession = "org.freedesktop.Secret.Error.NoSession"
    static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
    static let alreadyExists = "org.freedesktop.Secret.Error.AlreadyExists"
    static let denied = "org.gnome.keyring.Error.Denied"
    /// A client over a per-client limit, or a budget with no room left.
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    static func noSession(_ message: String) -> DBusError { DBusError(name: noSession, message: message) }
    static func noSuchObject(_ message: String) -> DBusError { DBusError(name: noSuchObject, message: message) }
    static func isLocked(_ message: String) -> DBusError { DBusError(name: isLocked, message: message) }
    static func limitsExceeded(_ message: String) -> DBusError { DBusError(name: limitsExceeded, message: message) }

    /// The secure memory budget had no room for what the call needed.
    static let outOfSecureMemory = limitsExceeded(
        "cofferd has no secure memory left for this request; try again with fewer or smaller secrets, or close sessions you no longer use")
}

/// Core errors become the D-Bus errors libsecret, SecretStorage and keyring expect.
extension CofferError: DBusErrorConvertible {
    public var dbusError: DBusError {
        switch self {
        case .locked: SecretError.isLocked(description)
        case .itemNotFound, .collectionNotFound: SecretError.noSuchObject(description)
        case .invalidArgument: .invalidArgs(description)
        case .authenticationFailed: DBusError(name: SecretError.denied, message: "The password was invalid")
        case .duplicateItem, .collectionExists: DBusError(name: SecretError.alreadyExists, message: description)
        case .storeCorrupt, .io: .failed(description)
        case .limitExceeded: SecretError.limitsExceeded(description)
        }
    }
}
