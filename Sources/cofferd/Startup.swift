import CofferCore
import CofferCrypto
import DBusKit
import Foundation
import SystemKit

/// The steps between parsing flags and serving.
enum Startup {
    static let busName = "org.freedesktop.secrets"

    /// Longest `--unlock` password accepted (the secure pool is 4 MiB and shared with keys).
    static let maximumPasswordBytes = 1 << 20

    /// `--unlock`: everything on `descriptor` up to end of file is the password, less one
    /// trailing newline (`\n` or `\r\n`), as for the CLI's `--password-stdin`; nil if there is
    /// nothing. Read straight into secure memory: no ordinary copy of it is ever made.
    static func readPassword(from descriptor: FileDescriptor = .standardInput) throws -> SecureBytes? {
        let password: SecureBytes?
        do {
            password = try SecureBytes.read(toEndOf: descriptor, limit: maximumPasswordBytes)
        } catch let error as Errno {
            throw StartupError("cannot read the --unlock password from standard input: \(error.reason)")
        }
        guard let password else {
            throw StartupError("the password given to --unlock is longer than \(maximumPasswordBytes) bytes")
        }
        let length = password.count - newlineLength(at: password.count, of: password)
        password.truncate(to: length)
        return password.isEmpty ? nil : password
    }

    /// How many bytes of line end (`\n`, `\r\n`, or none) end `bytes[..<end]`.
    private static func newlineLength(at end: Int, of bytes: SecureBytes) -> Int {
        guard end >= 1, bytes[end - 1] == UInt8(ascii: "\n") else { return 0 }
        return end >= 2 && bytes[end - 2] == UInt8(ascii: "\r") ? 2 : 1
    }

    /// `--unlock`: creates `login` with `password` if it is missing, then unlocks it. A damaged
    /// `login` file is left exactly as it is (never replaced by a fresh one) and reported; the
    /// daemon still starts and serves the other collections.
    static func unlockLogin(_ keychain: Keychain, password: SecureBytes?, log: (String) -> Void) throws {
        guard let password else { return }
        if try !keychain.collectionIDs().contains(.login) {
            try keychain.createCollection(label: "Login", id: .login, password: password)
            log("created the login collection")
        } else {
            do {
                try unlock(keychain, password: password, log: log)
            } catch CofferError.authenticationFailed {
                throw StartupError("the password given to --unlock does not open the login collection")
            } catch CofferError.storeCorrupt(let file, let reason) {
                log("warning: the login collection is damaged (\(file): \(reason)); it was left untouched and stays locked. The other collections are served. Move the file aside (or restore it from a backup) to start a new login collection")
                return
            }
        }
        log("collection login unlocked")
    }

    /// Unlocks `login`. Earlier versions of `--unlock` kept a trailing newline in the password, so a
    /// collection made by `echo pw | cofferd --unlock` has "pw\n" for password: when `password`
    /// does not open it but `password` + "\n" does, the password is changed to `password` (so
    /// that the CLI, which never sends the newline, opens it too) and the log says so.
    private static func unlock(_ keychain: Keychain, password: SecureBytes, log: (String) -> Void) throws {
        do {
            try keychain.unlock(.login, password: password)
        } catch CofferError.authenticationFailed {
            let withNewline = try password.slice(0..<password.count)
            try withNewline.append(UInt8(ascii: "\n"))
            guard (try? keychain.unlock(.login, password: withNewline)) != nil else { throw CofferError.authenticationFailed }
            try keychain.changePassword(.login, from: withNewline, to: password)
            log("the login password was stored with a trailing newline by an older cofferd; it no longer has one, so coffer can type it")
        }
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
