import CofferCore
import CofferCrypto
import CofferStore
import SystemKit

/// The one place that opens the keychain and gets a collection unlocked.
///
/// Without `--data-dir`, when a Secret Service (cofferd) owns org.freedesktop.secrets on the
/// session bus, every command goes through it (`DaemonKeychain`): a collection it has
/// unlocked needs no password, and unlocking or locking lasts beyond this process.
/// Otherwise (`--data-dir`, no session bus, nobody owning the name) the encrypted files are
/// opened in this process (`DirectKeychain`) and every command unlocks with the password
/// again. Commands see only `KeychainBackend`, so both behave the same way.
struct KeychainAccess {
    let keychain: any KeychainBackend
    /// The `--data-dir` the user gave, repeated in hints so that copied commands work.
    private let explicitDirectory: String?

    /// How many times a password is asked on a terminal before giving up.
    static let terminalAttempts = 3

    /// With `direct`, the store files are opened in this process even when a daemon runs (for
    /// commands that must prove the password themselves, such as changing access rules).
    init(_ global: GlobalOptions, direct: Bool = false) throws {
        explicitDirectory = global.dataDir
        if !direct, global.dataDir == nil, let daemon = DaemonKeychain.connectIfRunning() {
            keychain = daemon
        } else {
            keychain = try DirectKeychain(directory: global.storeDirectory)
        }
    }

    /// Whether the commands go through a running daemon.
    var viaDaemon: Bool { keychain.keepsUnlocked }

    /// The store opened in this process (nil through the daemon).
    var storeKeychain: Keychain? { (keychain as? DirectKeychain)?.keychain }

    /// `coffer [--data-dir DIR] <arguments>`, for hints in messages.
    func command(_ arguments: String) -> String {
        guard let explicitDirectory else { return "coffer \(arguments)" }
        return "coffer --data-dir \(shellQuoted(explicitDirectory)) \(arguments)"
    }

    // MARK: Which collection

    /// The collection `name` names (a collection id or an alias), or with nil the collection
    /// of the `default` alias (which falls back to `login`).
    func resolve(_ name: String?) throws -> CollectionID {
        guard let name else { return try defaultCollection() }
        if let id = CollectionID(name), try keychain.collectionIDs().contains(id) { return id }
        if let id = try keychain.resolveAlias(name) { return id }
        throw CLIError.notFound("no collection named '\(Encode.display(name))'. List them with: \(command("collections"))")
    }

    /// `name` as an existing collection id (no alias lookup: for destructive commands).
    func existing(_ name: String) throws -> CollectionID {
        guard let id = CollectionID(name), try keychain.collectionIDs().contains(id) else {
            throw CLIError.notFound("no collection named '\(Encode.display(name))'. List them with: \(command("collections"))")
        }
        return id
    }

    private func defaultCollection() throws -> CollectionID {
        if let id = try keychain.resolveAlias(Keychain.defaultAlias) { return id }
        let ids = try keychain.collectionIDs()
        guard !ids.isEmpty else {
            throw CLIError.notFound("no collection yet. Create one with: \(command("create-collection login"))")
        }
        let names = ids.map(\.rawValue).joined(separator: ", ")
        throw CLIError.notFound("no default collection (there is no 'login' and no 'default' alias); pass --collection ID (existing: \(names))")
    }

    // MARK: Unlocking

    /// Whether `id` needs a password before its items can be read or changed.
    func isLocked(_ id: CollectionID) throws -> Bool {
        try keychain.info(id).isLocked
    }

    /// Unlocks `id` unless it already is, asking `input` for the password (up to three
    /// times on a terminal). A wrong password exits with status 3. Returns whether a password
    /// was needed.
    @discardableResult
    func unlock(_ id: CollectionID, input: InputSource) throws -> Bool {
        guard try isLocked(id) else {
            // The daemon may have it unlocked already. With --password-stdin the first line is
            // still the password (so that what follows it, a secret, is read the same way in
            // both modes): read it and drop it.
            input.skipStdinPassword(for: id)
            return false
        }
        let attempts = input.asksOnTerminal ? Self.terminalAttempts : 1
        for attempt in 1...attempts {
            let password = try input.password(for: id)
            do {
                try keychain.unlock(id, password: password)
                return true
            } catch {
                guard isWrongPassword(error) else { throw error }
                if attempt < attempts {
                    Output.note("wrong password, try again")
                }
            }
        }
        throw CLIError.locked("wrong password for collection '\(id)'; nothing was changed")
    }

    /// Changes the password of `id`: the current one (checked first, with retries, on a
    /// terminal; through the daemon, checked by the change itself), then the new one (asked
    /// twice on a terminal).
    func changePassword(_ id: CollectionID, input: InputSource) throws {
        var old = try input.password(for: id, prompt: "Current password for '\(id)': ")
        if viaDaemon {
            return try changePasswordThroughDaemon(id, old: old, input: input)
        }
        if input.asksOnTerminal {
            // Check the old password before asking for a new one, and allow retries.
            var attempt = 1
            while true {
                do {
                    try keychain.unlock(id, password: old)
                    break
                } catch {
                    guard isWrongPassword(error) else { throw error }
                    guard attempt < Self.terminalAttempts else {
                        throw CLIError.locked("wrong password for collection '\(id)'; the password was not changed")
                    }
                    Output.note("wrong password, try again")
                    attempt += 1
                    old = try input.password(for: id, prompt: "Current password for '\(id)': ")
                }
            }
        }
        let new = try input.newPassword(for: id)
        do {
            try keychain.changePassword(id, from: old, to: new)
        } catch {
            guard isWrongPassword(error) else { throw error }
            throw CLIError.locked("wrong password for collection '\(id)'; the password was not changed")
        }
    }

    /// Through the daemon the current password is checked by the change itself (checking it
    /// with an unlock first would leave the collection unlocked there): on a terminal a wrong
    /// one is asked again, keeping the new password already typed.
    private func changePasswordThroughDaemon(_ id: CollectionID, old first: SecureBytes, input: InputSource) throws {
        var old = first
        let new = try input.newPassword(for: id)
        let attempts = input.asksOnTerminal ? Self.terminalAttempts : 1
        for attempt in 1...attempts {
            do {
                try keychain.changePassword(id, from: old, to: new)
                return
            } catch {
                guard isWrongPassword(error) else { throw error }
                guard attempt < attempts else { break }
                Output.note("wrong password, try again")
                old = try input.password(for: id, prompt: "Current password for '\(id)': ")
            }
        }
        throw CLIError.locked("wrong password for collection '\(id)'; the password was not changed")
    }
}

/// Whether `error` says a password was wrong.
func isWrongPassword(_ error: any Error) -> Bool {
    (error as? CofferError) == .authenticationFailed
}

/// `text` quoted for a POSIX shell when it needs quoting.
func shellQuoted(_ text: String) -> String { ShellQuoting.quoted(text) }
