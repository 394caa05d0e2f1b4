import CofferCore
import CofferCrypto
import DBusKit
import Foundation

/// The steps between parsing flags and serving.
enum Startup {
    static let busName = "org.freedesktop.secrets"

    /// `--unlock`: creates `login` with `password` if it is missing, then unlocks it.
    static func unlockLogin(_ keychain: Keychain, password: SecureBytes, log: (String) -> Void) throws {
        if try !keychain.collectionIDs().contains(.login) {
            try keychain.createCollection(label: "Login", id: .login, password: password)
            log("created the login collection")
        } else {
            do {
                try keychain.unlock(.login, password: password)
            } catch CofferError.authenticationFailed {
                throw StartupError("the password given to --unlock does not open the login collection")
            }
        }
        log("collection login unlocked")
    }

    /// Owns the bus name, or explains who does.
    static func claimName(on connection: DBusConnection, replace: Bool, log: (String) -> Void) throws {
        var flags: RequestNameFlags = [.allowReplacement, .doNotQueue]
        if replace { flags.insert(.replaceExisting) }
        let reply = try connection.requestName(busName, flags: flags)
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            let owner = (try? connection.nameOwner(busName)) ?? "another process"
            throw StartupError("\(busName) is owned by \(owner) (another Secret Service such as gnome-keyring). Stop it, or run cofferd --replace if it allows replacement.")
        }
    }
}

/// A start-up failure: printed as one line, exit status 1.
struct StartupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
