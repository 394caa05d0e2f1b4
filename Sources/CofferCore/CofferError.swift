import CofferCrypto

/// Every failure the core and the store report, typed so that callers (the D-Bus layer, the CLI)
/// can map each to the error their own clients expect. Messages never contain secret bytes.
public enum CofferError: Error, Equatable, Sendable {
    /// An item with exactly the same attributes exists and the caller asked to fail on duplicates.
    case duplicateItem
    /// No item matched where at least one was required (update), or an item id is unknown.
    case itemNotFound
    /// The named collection does not exist.
    case collectionNotFound(String)
    /// A collection with that id already exists.
    case collectionExists(String)
    /// The operation needs the collection unlocked.
    case locked(String)
    /// The password did not open the collection.
    case authenticationFailed
    /// The caller's input was rejected; the text says what was wrong.
    case invalidArgument(String)
    /// A store file failed to parse or authenticate. It is left untouched.
    case storeCorrupt(file: String, reason: String)
    /// An operating-system call failed (disk full, permissions, ...).
    case io(String)
    /// A memory budget (the session collection's, the secure memory for secrets) has no room
    /// for this request now; the text says which. Nothing was changed.
    case limitExceeded(String)
    /// Wrong passwords were given for the collection: the next one is not checked for this
    /// many more seconds.
    case throttled(String, seconds: UInt64)
    /// A key slot's device (this machine's TPM) would not open it, for a reason that is no
    /// wrong guess (none reachable, another machine's, a changed boot state); the text says why.
    case keySlotRefused(String)
}

extension CofferError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .duplicateItem: "an item with the same attributes already exists"
        case .itemNotFound: "no matching item"
        case .collectionNotFound(let id): "no collection named '\(id)'"
        case .collectionExists(let id): "a collection named '\(id)' already exists"
        case .locked(let id): "collection '\(id)' is locked"
        case .authenticationFailed: "wrong password"
        case .invalidArgument(let what): "invalid argument: \(what)"
        case .storeCorrupt(let file, let reason): "store file \(file) is damaged (\(reason)); it was left untouched"
        case .io(let what): what
        case .limitExceeded(let what): what
        case .throttled(let id, let seconds):
            "too many wrong passwords for collection '\(id)': the next one is checked in \(seconds) second\(seconds == 1 ? "" : "s"); wait, then try again"
        case .keySlotRefused(let why): why
        }
    }
}

extension CofferError {
    /// Runs a CofferCrypto call, turning its errors into the core's: a tag mismatch is
    /// `authenticationFailed`, an exhausted secure-memory budget `limitExceeded`.
    public static func catching<R>(_ body: () throws -> R) throws(CofferError) -> R {
        do {
            return try body()
        } catch CryptoError.authenticationFailed {
            throw .authenticationFailed
        } catch CryptoError.secureMemoryExhausted(let requested) {
            throw .limitExceeded("no secure memory left for this request (it needed \(requested) more bytes); try again with fewer or smaller secrets")
        } catch CryptoError.invalidInput(let what) {
            throw .invalidArgument(what)
        } catch {
            throw .io("cryptography failed: \(error)")
        }
    }
}
