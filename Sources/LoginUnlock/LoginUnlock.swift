import SystemKit

/// What the login manager tells pam_coffer (see PAMCoffer's `PAMRequest`, over libpam): the
/// user, the module's options, the session's environment, and a way to hand the password over
/// without it ever entering Swift.
public protocol LoginRequest {
    var user: String { get }
    var options: [String: String] { get }
    /// The user's uid, gid and home directory.
    var account: (uid: UInt32, gid: UInt32, home: String)? { get }
    /// A variable of the session's environment, else of this process.
    func environment(_ name: String) -> String?
    /// Whether a password was kept at authentication.
    var hasStashedPassword: Bool { get }
    /// Writes the password kept at authentication, then a newline, to `descriptor`.
    func writeStashedPassword(to descriptor: Int32) -> Bool
    /// Keeps the current password for a password change: the one an earlier module of the stack
    /// took, else (only if `mayAsk`) asked from the user; whether there is one.
    func keepOldPassword(mayAsk: Bool) -> Bool
    /// Writes the old password kept by `keepOldPassword`, then the new one, each with a newline,
    /// to `descriptor`.
    func writeOldAndNewPassword(to descriptor: Int32) -> Bool
    /// One line in the system log (never a secret).
    func log(_ message: String)
}

/// What pam_coffer does for a login: unlock the user's default collection with the password
/// they typed (starting cofferd, or creating `login` on a first login, as `cofferd --unlock`
/// does), or, when no password came through authentication (autologin, fingerprint, smart
/// card), with the collection's TPM key slot; and follow their password changes. The password
/// reaches cofferd and coffer on a pipe.
///
/// Options (in the PAM line): `cofferd=PATH`, `coffer=PATH` (default /usr/bin/…),
/// `data-dir=DIR` for the cofferd it starts (default: theirs; coffer talks to that cofferd),
/// `tpm-tcti=CONF` for another TPM than /dev/tpmrm0 (tpm2-tss's TCTI configuration).
public enum LoginUnlock {
    public static func unlockAtLogin(_ request: some LoginRequest) {
        guard request.hasStashedPassword else { return unlockWithTPM(request) }
        // First cofferd --unlock: it serves unlocked once it returns 0. When another one serves
        // already (the name is owned), coffer unlocks through it.
        if run(request, program: request.options["cofferd"] ?? "/usr/bin/cofferd", ["--unlock"],
               password: request.writeStashedPassword) { return }
        if !run(request, program: request.options["coffer"] ?? "/usr/bin/coffer", ["unlock", "--password-stdin"],
                password: request.writeStashedPassword) {
            request.log("could not unlock the default collection of \(request.user); it stays locked")
        }
    }

    /// No password came through authentication: the TPM slot of the default collection, if it
    /// has one without a PIN, opens it, in a cofferd started for it or through the one running.
    private static func unlockWithTPM(_ request: some LoginRequest) {
        let none: (Int32) -> Bool = { _ in true }
        if run(request, program: request.options["cofferd"] ?? "/usr/bin/cofferd", ["--unlock-with-tpm"], password: none) { return }
        if !run(request, program: request.options["coffer"] ?? "/usr/bin/coffer", ["unlock", "--tpm"], password: none) {
            request.log("no password came through authentication, and this machine's TPM did not unlock the default collection of \(request.user) (it needs a TPM key slot without a PIN: coffer slots add-tpm); it stays locked")
        }
    }

    /// The first phase of a password change: keep the current password, which the collection
    /// needs to be re-keyed. Root setting another user's password knows no old one: nothing is
    /// asked, and that user's collection keeps its password.
    public static func prepareForPasswordChange(_ request: some LoginRequest) {
        let byRoot = ProcessControl.userID == 0 && request.account.map { $0.uid != 0 } ?? true
        if !request.keepOldPassword(mayAsk: !byRoot) {
            request.log("no current password for \(request.user)'s default collection; it keeps its password (change it with: coffer passwd)")
        }
    }

    public static func followPasswordChange(_ request: some LoginRequest) {
        if !run(request, program: request.options["coffer"] ?? "/usr/bin/coffer", ["passwd", "--password-stdin"],
                password: request.writeOldAndNewPassword) {
            request.log("could not change the password of \(request.user)'s default collection; change it with: coffer passwd")
        }
    }

    /// Runs `program arguments` as the user, with the password written on its stdin by
    /// `password`; whether it succeeded within 60 s.
    private static func run(_ request: some LoginRequest, program: String, _ arguments: [String],
                            password: (Int32) -> Bool) -> Bool {
        guard let account = request.account else {
            request.log("no account named \(request.user)")
            return false
        }
        let runtime = request.environment("XDG_RUNTIME_DIR") ?? "/run/user/\(account.uid)"
        var environment = ["HOME": account.home, "USER": request.user, "LOGNAME": request.user,
                           "PATH": "/usr/local/bin:/usr/bin:/bin", "XDG_RUNTIME_DIR": runtime,
                           "DBUS_SESSION_BUS_ADDRESS": request.environment("DBUS_SESSION_BUS_ADDRESS") ?? "unix:path=\(runtime)/bus"]
        if let data = request.environment("XDG_DATA_HOME") { environment["XDG_DATA_HOME"] = data }
        if let tcti = request.options["tpm-tcti"] { environment["COFFER_TPM_TCTI"] = tcti }
        // coffer goes through the running cofferd; only a cofferd started here needs the store.
        let dataDir = program.hasSuffix("cofferd") ? request.options["data-dir"].map { ["--data-dir", $0] } ?? [] : []
        var command = [program] + arguments + dataDir
        if ProcessControl.userID == 0 && account.uid != 0 {
            command = ["/usr/bin/setpriv", "--reuid=\(account.uid)", "--regid=\(account.gid)", "--init-groups", "--"] + command
        }
        do {
            let (readEnd, writeEnd) = try FileDescriptor.pipe()
            // Nothing of the login's own output: a daemon left running must not hold it open.
            let nowhere = try FileDescriptor.open("/dev/null", .readWrite)
            defer { nowhere.close() }
            let child = try Subprocess(command[0], arguments: Array(command.dropFirst()), environment: environment,
                                       standardInput: readEnd, standardOutput: nowhere, standardError: nowhere,
                                       newSession: true)
            readEnd.close()
            let written = password(writeEnd.rawValue)
            writeEnd.close()
            guard let ended = child.wait(timeout: .seconds(60)) else {
                child.send(signal: 9)   // SIGKILL
                request.log("\(program) did not finish within 60 s")
                return false
            }
            return written && ended == .exited(0)
        } catch {
            request.log("cannot run \(program): \(error)")
            return false
        }
    }
}
