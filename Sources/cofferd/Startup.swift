import CofferCore
import CofferCrypto
import DBusKit
import FoundationEssentials
import Glibc
import CofferStore
import SystemKit
import TPMKit

/// The steps between parsing flags and serving.
enum Startup {
    static let busName = "org.freedesktop.secrets"

    /// Longest `--unlock` password accepted (locked memory for secrets is 3.5 MiB, shared with keys).
    static let maximumPasswordBytes = 1 << 20

    /// `--unlock`: everything on `descriptor` up to end of file is the password, less one
    /// trailing newline (`\n` or `\r\n`), as for the CLI's `--password-stdin`; nil if there is
    /// nothing. Read straight into secure memory: no ordinary copy of it is ever made.
    static func readPassword(from descriptor: FileDescriptor = .standardInput) throws -> SecureBytes? {
        if descriptor.isTerminal { return try askPassword(on: descriptor) }
        let password: SecureBytes?
        do {
            password = try SecureBytes.read(toEndOf: descriptor, limit: maximumPasswordBytes)
        } catch let error as Errno {
            throw StartupError("cannot read the --unlock password from standard input: \(error.reason)", status: ExitStatus.usage)
        }
        guard let password else {
            throw StartupError("the password given to --unlock is longer than \(maximumPasswordBytes) bytes", status: ExitStatus.usage)
        }
        let length = password.count - newlineLength(at: password.count, of: password)
        password.truncate(to: length)
        return password.isEmpty ? nil : password
    }

    /// `--unlock` typed on a terminal: asked for without echo, one line.
    private static func askPassword(on terminal: FileDescriptor) throws -> SecureBytes? {
        let prompt = Array("Password of the default collection (login, unless the default alias names another): ".utf8)
        let read = try TerminalEcho.off(on: terminal) { () throws -> (line: SecureBytes, sawNewline: Bool)? in
            _ = try? FileDescriptor.standardError.writeAll(prompt)
            defer { _ = try? FileDescriptor.standardError.writeAll(Array("\n".utf8)) }
            return try SecureBytes.readLine(from: terminal, limit: maximumPasswordBytes)
        }
        guard let read else {
            throw StartupError("the password typed for --unlock is longer than \(maximumPasswordBytes) bytes", status: ExitStatus.usage)
        }
        return read.line.isEmpty ? nil : read.line
    }

    /// How many bytes of line end (`\n`, `\r\n`, or none) end `bytes[..<end]`.
    private static func newlineLength(at end: Int, of bytes: SecureBytes) -> Int {
        guard end >= 1, bytes[end - 1] == UInt8(ascii: "\n") else { return 0 }
        return end >= 2 && bytes[end - 2] == UInt8(ascii: "\r") ? 2 : 1
    }

    /// `--unlock`: unlocks the collection the `default` alias names (where clients store when
    /// they name none); when there is none, creates `login` with `password` and unlocks it. A
    /// damaged collection is left exactly as it is (never replaced by a fresh one) and
    /// reported; the daemon still starts and serves the other collections.
    static func unlockLogin(_ keychain: Keychain, password: SecureBytes?, audit: any AuditRecorder,
                            log: (String) -> Void) throws {
        guard let password else { return }
        guard let target = try keychain.resolveAlias(Keychain.defaultAlias) else {
            try keychain.createCollection(label: "Login", id: .login, password: password)
            log("created the login collection (the default one), and unlocked it")
            audit.record(AuditEvent(action: .unlock, outcome: .ok, collection: .login, label: "Login",
                                    detail: "created by cofferd --unlock"))
            return
        }
        do {
            try unlock(target, in: keychain, password: password, log: log)
            audit.record(AuditEvent(action: .unlock, outcome: .ok, collection: target, label: try? keychain.info(target).label,
                                    detail: "cofferd --unlock"))
        } catch CofferError.authenticationFailed {
            audit.record(AuditEvent(action: .unlock, outcome: .failed, collection: target, label: try? keychain.info(target).label,
                                    detail: "wrong password given to cofferd --unlock"))
            throw StartupError("the password given to --unlock does not open the collection '\(target)', which the default alias names; nothing was changed", status: ExitStatus.locked)
        } catch CofferError.storeCorrupt(let file, let reason) {
            log("warning: the \(target) collection is damaged (\(file): \(reason)); it was left untouched and stays locked. The other collections are served. Move the file aside (or restore it from a backup) to start anew")
            return
        }
        log("collection \(target) unlocked (the default one)")
    }

    /// `--unlock-with-tpm`: unlocks the collection the `default` alias names through its TPM
    /// key slot (one without a PIN) and `device`. Anything that keeps it locked (no such
    /// collection or slot, another machine's TPM, changed PCRs) ends cofferd with status 3 and
    /// the reason, as a wrong `--unlock` password does.
    static func unlockLoginWithTPM(_ keychain: Keychain, device: TPMDevice, audit: any AuditRecorder,
                                   log: (String) -> Void) throws {
        guard let target = try keychain.resolveAlias(Keychain.defaultAlias),
              let collection = try keychain.collection(target) as? FileCollection else {
            throw StartupError("there is no default collection for --unlock-with-tpm to unlock; create one (coffer create-collection) and give it a TPM key slot (coffer slots add-tpm)", status: ExitStatus.locked)
        }
        let label = try? keychain.info(target).label
        do {
            try Keychain.waitingOutThrottle(announce: { log("wrong passwords were given for \(target) before: waiting \($0) seconds before the TPM is asked") }) {
                () throws(CofferError) in try collection.unlock(tpm: device, pin: nil)
            }
        } catch {
            audit.record(AuditEvent(action: .unlock, outcome: .failed, collection: target, label: label, detail: "cofferd --unlock-with-tpm"))
            throw StartupError("the TPM did not unlock the collection '\(target)', which the default alias names: \(error)", status: ExitStatus.locked)
        }
        audit.record(AuditEvent(action: .unlock, outcome: .ok, collection: target, label: label, detail: "cofferd --unlock-with-tpm"))
        log("collection \(target) unlocked with this machine's TPM (the default one)")
    }

    /// Unlocks `id`. Earlier versions of `--unlock` kept a trailing newline in the password, so
    /// a collection made by `echo pw | cofferd --unlock` has "pw\n" for password: when `password`
    /// does not open it but `password` + "\n" does, the password is changed to `password` (so
    /// that the CLI, which never sends the newline, opens it too) and the log says so.
    private static func unlock(_ id: CollectionID, in keychain: Keychain, password: SecureBytes, log: (String) -> Void) throws {
        let withNewline = try password.slice(0..<password.count)
        try withNewline.append(UInt8(ascii: "\n"))
        // Both at once: one wrong password for the throttle when neither is right.
        let opened = try Keychain.waitingOutThrottle(announce: { log("wrong passwords were given for \(id) before: waiting \($0) seconds before this one is checked") }) {
            () throws(CofferError) in try keychain.unlock(id, anyOf: [password, withNewline])
        }
        guard opened == 1 else { return }
        try keychain.changePassword(id, from: withNewline, to: password)
        log("the password of \(id) was stored with a trailing newline by an older cofferd; it no longer has one, so coffer can type it")
    }

    /// The system bus with its loop running on a thread of its own (logind's and fprintd's
    /// signals come from it), or why there is none (a container), for the log.
    static func systemBus() -> Result<LoopThread, DBusError> {
        Result { () throws(DBusError) in LoopThread(try DBusConnection.systemBus()) }
    }

    /// What the log says when there is no system bus.
    static func noSystemBus(_ error: DBusError) -> String {
        "no system bus (\(error.message)): screen locks, suspend and logout will not lock collections, and no fingerprint unlocks them; idle time still locks"
    }

    /// Owns the bus name, or explains who does and what to do.
    static func claimName(on connection: DBusConnection, replace: Bool, log: (String) -> Void) throws {
        var flags: RequestNameFlags = [.allowReplacement, .doNotQueue]
        if replace { flags.insert(.replaceExisting) }
        let reply = try connection.requestName(busName, flags: flags)
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            let owner = BusNameOwner(of: busName, on: connection).map(String.init(describing:)) ?? "another process"
            let stopIt = "Stop it first (gnome-keyring: see \"Switching from gnome-keyring\" in Coffer's README; another cofferd: cofferd --stop)"
            if replace {
                throw StartupError("\(busName) is served by \(owner), which does not let another Secret Service take over, even with --replace. \(stopIt), then start cofferd again.",
                                   status: ExitStatus.nameTaken)
            }
            throw StartupError("\(busName) is already served by \(owner). \(stopIt), or start cofferd with --replace to take over from a provider that allows it (cofferd does).",
                               status: ExitStatus.nameTaken)
        }
    }
}
