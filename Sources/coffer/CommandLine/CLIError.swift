import CofferCore
import CofferCrypto

/// The exit statuses of `coffer`, documented in the root command's help.
enum ExitStatus {
    static let success: Int32 = 0
    /// No item matched, or the named collection does not exist.
    static let notFound: Int32 = 1
    /// Bad options or arguments, or input coffer cannot get (no terminal, no --password-stdin).
    static let usage: Int32 = 2
    /// Wrong password, or the collection is locked.
    static let locked: Int32 = 3
    /// An item with the same attributes (or a collection with the same id) already exists.
    static let duplicate: Int32 = 4
    /// A store file is damaged, or an I/O or system call failed.
    static let storeFailure: Int32 = 5
    /// `coffer doctor` found at least one problem.
    static let problemFound: Int32 = 6
    /// cofferd did not let coffer read a secret: the collection's policy, or the user, refused.
    static let refused: Int32 = 7
}

/// A failure to report: one line on stderr (`coffer: ` + message) and an exit status.
/// Messages say what to do next and never contain a secret or a password.
struct CLIError: Error {
    let status: Int32
    let message: String

    init(status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    static func usage(_ message: String) -> CLIError { CLIError(status: ExitStatus.usage, message) }
    static func notFound(_ message: String) -> CLIError { CLIError(status: ExitStatus.notFound, message) }
    static func locked(_ message: String) -> CLIError { CLIError(status: ExitStatus.locked, message) }
    static func duplicate(_ message: String) -> CLIError { CLIError(status: ExitStatus.duplicate, message) }
    static func storeFailure(_ message: String) -> CLIError { CLIError(status: ExitStatus.storeFailure, message) }
    static func refused(_ message: String) -> CLIError { CLIError(status: ExitStatus.refused, message) }

    /// The generic mapping of a core error; callers that know more (which collection, which
    /// operation) catch the cases they can explain better first.
    init(_ error: CofferError) {
        switch error {
        case .duplicateItem:
            self = .duplicate("an item with exactly these attributes already exists; use --replace to overwrite it")
        case .itemNotFound:
            self = .notFound("no matching item")
        case .collectionNotFound(let id):
            self = .notFound("no collection named '\(id)'. List them with: coffer collections")
        case .collectionExists(let id):
            self = .duplicate("a collection named '\(id)' already exists; choose another id")
        case .locked(let id):
            self = .locked("collection '\(id)' is locked; unlock it with: coffer unlock \(id)")
        case .authenticationFailed:
            self = .locked("wrong password; nothing was changed")
        case .invalidArgument(let what):
            self = .usage("invalid argument: \(what)")
        case .storeCorrupt(let file, let reason) where file.hasSuffix(".keys"):
            self = .storeFailure("store file \(file) is damaged (\(reason)); it was left untouched. It holds every way into the collection: put back the copy saved with the collection's .coffer file, or restore the collection from a backup (coffer import backup FILE)")
        case .storeCorrupt(let file, let reason):
            self = .storeFailure("store file \(file) is damaged (\(reason)); it was left untouched. Restore it from a backup or move it aside")
        case .io(let what):
            self = .storeFailure("\(what); check the permissions and free space of the data directory")
        case .limitExceeded(let what):
            self = .storeFailure("\(what); nothing was changed")
        case .throttled:
            self = .locked("\(error.description); nothing was changed")
        case .keySlotRefused(let why):
            self = .locked("\(why); nothing was changed")
        }
    }

    /// Any error that reaches the top of a command.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: error
        case let error as CofferError: CLIError(error)
        case CryptoError.secureMemoryExhausted:
            .storeFailure("out of secure memory for secrets (at most \(Crypto.secureMemoryUse.limit >> 10) KiB); ask for fewer or smaller secrets at a time")
        case let error as CryptoError: .storeFailure("cryptographic failure: \(error)")
        default: .storeFailure("unexpected failure: \(error)")
        }
    }
}
