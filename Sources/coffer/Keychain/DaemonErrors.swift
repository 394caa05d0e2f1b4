import CofferCore
import DBusKit
import SecretServiceClient
import SecretServiceProtocol

/// How errors from the Secret Service become coffer's errors, so that the exit status and
/// message match what direct mode says for the same situation:
///
/// - `Secret.Error.NoSuchObject`, `DBus.Error.UnknownObject` -> not found (1)
/// - `Secret.Error.IsLocked` -> locked (3); `org.gnome.keyring.Error.Denied` -> wrong password (3)
/// - `Secret.Error.AlreadyExists` -> already exists (4)
/// - `DBus.Error.InvalidArgs` -> usage (2): the service refused what the command asked for
/// - `DBus.Error.AccessDenied` -> refused (7): the collection's policy, or the user, refused
/// - a prompt dismissed or unanswered, anything else (the service gone, a timeout, a store
///   failure in it) -> 5
enum DaemonErrors {
    /// What a call was about, to name it in the error.
    enum Subject {
        case service
        case collection(CollectionID)
        case item(CollectionID)
    }

    static func translate(_ error: any Error, about subject: Subject) -> any Error {
        if let prompt = error as? PromptError { return CLIError.storeFailure("the Secret Service asked the user: \(prompt)") }
        guard let error = error as? DBusError else { return error }
        let collection: CollectionID? = switch subject {
        case .service: nil
        case .collection(let id), .item(let id): id
        }
        switch error.name {
        case SecretServiceError.Name.noSuchObject, DBusError.Name.unknownObject:
            if case .item = subject { return CofferError.itemNotFound }
            if let collection { return CofferError.collectionNotFound(collection.rawValue) }
            return CLIError.notFound("the Secret Service has no such object: \(detail(error))")
        case SecretServiceError.Name.isLocked:
            return CofferError.locked(collection?.rawValue ?? "?")
        case SecretServiceError.Name.denied:
            return CofferError.authenticationFailed
        case SecretServiceError.Name.alreadyExists:
            if case .item = subject { return CofferError.duplicateItem }
            return CofferError.collectionExists(collection?.rawValue ?? "?")
        case DBusError.Name.invalidArgs:
            return CLIError.usage("the Secret Service refused the request: \(detail(error))")
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner, DBusError.Name.noReply,
             DBusError.Name.disconnected:
            return CLIError.storeFailure("the Secret Service (cofferd) stopped answering: \(detail(error)). Check that it runs, then try again")
        case DBusError.Name.accessDenied:
            return CLIError.refused("cofferd refused: \(detail(error))")
        default:
            return CLIError.storeFailure("the Secret Service failed: \(detail(error))")
        }
    }

    /// The error's message (never a secret: services do not echo them), safe to print.
    static func detail(_ error: DBusError) -> String {
        let text = error.message.isEmpty ? error.name : error.message
        return Encode.display(String(text.prefix(300)))
    }
}
