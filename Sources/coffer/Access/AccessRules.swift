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

    /// `text` as an application, or a usage error saying how to write one. `granting`: it is to
    /// be granted access, which an unverified process cannot be.
    static func application(_ text: String, granting: Bool = false) throws -> Application {
        guard let application = Application(encoded: text) else {
            throw ValidationError("'\(Encode.display(text))' does not name an application: write \(Application.rule)")
        }
        if granting && !application.isVerified {
            throw ValidationError("'\(Encode.display(text))' is an unverified process: the service cannot read which program it runs, "
                + "so a grant to it could be used by any process calling itself '\(Encode.display(application.name))'. "
                + "Grant the program by its path (exe:/usr/bin/NAME) once it no longer hides itself, or set the collection's policy to open")
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
