import ArgumentParser
import CofferCore
import SystemKit

/// A collection's access rules opened for `coffer access` and `coffer policy`: always on the
/// store files in this process, after the collection's password was given here — also when
/// cofferd runs (it sees the change at once) — so that no program can grant itself access
/// through the daemon.
struct AccessRules {
    let keychain: Keychain
    let collection: CollectionID
    let access: KeychainAccess
    /// The store directory (where the audit log is).
    let directory: String

    init(_ global: GlobalOptions, collection name: String?, passwords: PasswordOptions) throws {
        access = try KeychainAccess(global, direct: true)
        directory = global.storeDirectory
        guard let keychain = access.storeKeychain else { throw CLIError.storeFailure("cannot open the store files") }
        self.keychain = keychain
        collection = try access.resolve(name)
        try access.unlock(collection, input: InputSource(passwordFromStdin: passwords.passwordStdin))
    }

    var rules: CollectionAccess {
        get throws { try keychain.access(of: collection) }
    }

    /// Changes the rules durably; returns them as they are now.
    @discardableResult
    func change(_ body: (inout CollectionAccess) throws(CofferError) -> Void) throws -> CollectionAccess {
        do {
            return try keychain.updateAccess(of: collection, body)
        } catch .invalidArgument(let why) {
            throw CLIError.usage(why)
        }
    }

    /// `text` as an application, or a usage error saying how to write one.
    static func application(_ text: String) throws -> Application {
        guard let application = Application(encoded: text) else {
            throw ValidationError("'\(Encode.display(text))' does not name an application: write \(Application.rule)")
        }
        return application
    }
}

extension Application {
    /// This program, as the service identifies it: the executable the kernel runs.
    static var thisProgram: Application? {
        FileSystem.symbolicLinkTarget("/proc/self/exe").flatMap { Application(kind: .executable, name: $0) }
    }
}
