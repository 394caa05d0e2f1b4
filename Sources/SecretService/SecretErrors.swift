import CofferCore
import DBusKit
import SecretServiceProtocol

extension SecretServiceError {
    /// The secure memory budget had no room for what the call needed.
    static let outOfSecureMemory = SecretServiceError.limitsExceeded(
        "cofferd has no secure memory left for this request; try again with fewer or smaller secrets, or close sessions you no longer use")
}

/// Core errors become the D-Bus errors libsecret, SecretStorage and keyring expect.
extension CofferError: DBusErrorConvertible {
    public var dbusError: DBusError {
        switch self {
        case .locked: SecretServiceError.isLocked(description).dbusError
        case .itemNotFound, .collectionNotFound: SecretServiceError.noSuchObject(description).dbusError
        case .invalidArgument: .invalidArgs(description)
        case .authenticationFailed: SecretServiceError.denied("The password was invalid").dbusError
        case .duplicateItem, .collectionExists: SecretServiceError.alreadyExists(description).dbusError
        case .storeCorrupt, .io: .failed(description)
        case .limitExceeded: SecretServiceError.limitsExceeded(description).dbusError
        case .throttled: SecretServiceError.denied(description).dbusError
        case .keySlotRefused: .failed(description)
        }
    }
}
