import ArgumentParser
import CofferCore
import CofferCrypto
import CofferStore
import DBusKit
import FoundationEssentials
import Glibc
import SecretService
import SecretServiceProtocol
import SystemKit
import TPMKit

/// `cofferd`: the Secret Service daemon (bus name org.freedesktop.secrets).
@main
struct Cofferd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cofferd",
        abstract: "Serve passwords and secrets to applications over D-Bus (org.freedesktop.secrets).",
        discussion: """
        cofferd implements the freedesktop Secret Service API on the session bus, so that \
        secret-tool, libsecret applications, browsers and Python keyring store their secrets \
        in Coffer's encrypted store. It also serves the Secret portal's backend \
        (org.freedesktop.impl.portal.Secret), through which xdg-desktop-portal gives sandboxed \
        (Flatpak) applications their secrets.

        Collections are stored in \(FileStore.defaultDirectory(environment: ["HOME": "~"])) \
        (or $XDG_DATA_HOME/coffer, or --data-dir). Each is encrypted with a key derived from \
        its password (Argon2id) and stays locked until unlocked.

        Headless and CI use: pipe the password of the 'login' collection to --unlock. If that \
        collection does not exist it is created with this password, and the 'default' alias \
        (where clients store) points to it:

          printf '%s' "$PASSWORD" | cofferd --unlock --foreground &

        With a TPM key slot on the default collection (coffer slots add-tpm), \
        --unlock-with-tpm opens it through this machine's TPM instead: no password on stdin or \
        in a unit file. The TPM is /dev/tpmrm0 (membership of its group, usually 'tss', is \
        needed), or the one $COFFER_TPM_TCTI names in tpm2-tss's terms.

        Interactive use: locked collections are unlocked through a password dialog shown by a \
        pinentry program (pinentry-gnome3, -qt, -gtk-2, -curses or -tty; --pinentry to choose).

        LOCKING BY ITSELF
          An unlocked collection locks again after 15 minutes without a secret read or \
        written, when the screen locks, before suspend and when your last session ends \
        (logind and the screensaver tell cofferd); within 4 hours of the password, a \
        fingerprint (fprintd) unlocks it again. To change that, see coffer policy --help; \
        the settings live in $XDG_CONFIG_HOME/coffer/coffer.conf.

        LOG
          In the foreground, cofferd logs to standard error (the journal under systemd). \
        Detached, it says on the terminal whether it started and then logs to the system log \
        (journalctl --user -t cofferd, or journalctl -t cofferd). It never logs a secret.

        EXIT STATUS
          0  stopped cleanly (or --stop stopped the running cofferd)
          1  --stop: no cofferd serves this session bus
          2  usage error: bad option or argument, unreadable --unlock password
          3  the --unlock password (or --unlock-with-tpm, the TPM) does not open the default collection
          4  another Secret Service (or another cofferd) serves org.freedesktop.secrets
          5  cannot start: no session bus, a damaged or unreadable store, a system error
          Errors are one line on stderr starting with "cofferd: ".
        """,
        version: CofferVersion.current)

    @Flag(help: "Read the password of the 'login' collection from standard input (to end of file), create that collection if missing, and unlock it.")
    var unlock = false

    @Flag(name: .customLong("unlock-with-tpm"),
          help: "Unlock the default collection with its TPM key slot (one without a PIN), through this machine's TPM.")
    var unlockWithTPM = false

    @Flag(help: "Stay in the foreground (as systemd runs it). Otherwise cofferd detaches once it owns the bus name.")
    var foreground = false

    @Flag(help: "Take the bus name over from another Secret Service that allows it.")
    var replace = false

    @Flag(help: "Stop the cofferd serving this session bus, and wait until it has stopped (with systemd: systemctl --user stop cofferd).")
    var stop = false

    @Option(help: "Directory of the encrypted store.")
    var dataDir: String?

    @Option(help: "The pinentry program that asks for passwords (default: $COFFER_PINENTRY, else the first found of pinentry-gnome3, -qt, -gtk-2 when there is a display, and of pinentry-curses, -tty when there is a terminal: $GPG_TTY, or the one cofferd was started from).")
    var pinentry: String?

    @Option(help: ArgumentHelp("Bus address to serve on instead of the session bus.", visibility: .hidden))
    var address: String?

    @Option(name: .customLong("portal-frontend"),
            help: ArgumentHelp("Another program (absolute path) that may call the Secret portal backend, besides xdg-desktop-portal.",
                               visibility: .hidden))
    var portalFrontends: [String] = []

    @Option(help: ArgumentHelp("The most memory, in KiB, locked into RAM for keys and secrets (default 4096).", visibility: .hidden))
    var secureMemoryKib: Int = 4096

    @Option(help: ArgumentHelp("The system log's socket, for a detached cofferd.", visibility: .hidden))
    var logSocket: String = SystemLog.defaultSocket

    /// Written out (rather than ArgumentParser's own) so that every failure is one `cofferd: `
    /// line with a documented exit status.
    static func main() {
        do {
            let command = try parse()
            try command.run()
            Glibc.exit(ExitStatus.success)
        } catch {
            Glibc.exit(StartupError.report(error))
        }
    }

    func validate() throws {
        if unlock && unlockWithTPM {
            throw ValidationError("--unlock and --unlock-with-tpm are two ways to unlock the same collection; give one")
        }
        if stop && (unlock || unlockWithTPM || replace || dataDir != nil || pinentry != nil) {
            throw ValidationError("--stop stops the running cofferd; it takes no other option but --address")
        }
    }

    func run() throws {
        if stop {
            let connection = try address.map { try DBusConnection(address: $0) } ?? DBusConnection.sessionBus()
            defer { connection.close() }
            try Stop.stopServingDaemon(on: connection, log: Log.line)
            return
        }
        Crypto.unblockAllSignals()
        Crypto.disableCoreDumps()
        ProcessControl.makeNonDumpable()   // no other program of the user reads the keys from its memory
        ProcessControl.ignore(signal: SIGPIPE)
        // Fork first, before any libgcrypt or Dispatch use: mlock (the secure memory) and
        // threads are not inherited by a child, so they must be set up in the process that serves.
        // The terminal cofferd was started from, if any, for a terminal pinentry (known only
        // before detaching, which leaves it).
        let terminal = FileDescriptor.standardError.terminalPath ?? FileDescriptor.standardOutput.terminalPath
        let readiness = foreground ? nil : try Daemonizer.detach()
        Crypto.initialize(secureMemoryBytes: secureMemoryKib << 10)
        let log = Log.line
        if !Crypto.isSecureMemoryLocked {
            log("warning: the memory for keys and secrets cannot all be locked into RAM, so they may be written to swap; raise the locked-memory limit (ulimit -l, or LimitMEMLOCK= in the systemd unit) to at least \(secureMemoryKib) KiB")
        }

        if let clock = try TestClock.requested(in: ProcessInfo.processInfo.environment) { Clock.install(clock) }
        let directory = dataDir ?? FileStore.defaultDirectory()
        let keychain = Keychain(provider: try FileStore(directory: directory, warn: { log("warning: \($0)") }))
        // The password is read, used and wiped here: it is gone before the daemon serves.
        let audit = AuditLogFile(directory: directory, warn: { log("warning: audit log: \($0)") })
        if unlock { try Startup.unlockLogin(keychain, password: try Startup.readPassword(), audit: audit, log: log) }
        if unlockWithTPM {
            try Startup.unlockLoginWithTPM(keychain, device: .configured(ProcessInfo.processInfo.environment), audit: audit, log: log)
        }
        readiness?.leaveTerminal()

        let connection = try address.map { try DBusConnection(address: $0) } ?? DBusConnection.sessionBus()
        // Before the name is claimed: from then on clients (and service managers) see us as
        // started and may ask us to stop; a stop() before run() makes run() return at once.
        Shutdown.install(on: connection, log: log)
        let environment = ProcessInfo.processInfo.environment
        let pinentryProgram = PinentryChoice.program(option: pinentry, environment: environment)
        let pinentryEnvironment = PinentryChoice.environment(environment, startedOn: terminal)
        let passwords = Pinentry(program: pinentryProgram, environment: pinentryEnvironment)
        let lockSettings = LockSettingsSource(file: LockConfigurationFile(path: LockConfigurationFile.defaultPath()), log: log)
        let server = SecretServer(keychain: keychain, connection: connection, passwords: passwords, consent: passwords, audit: audit,
                                  lockSettings: lockSettings.current, log: log)
        let systemBusResult = Startup.systemBus()
        let systemBus = try? systemBusResult.get()
        server.fingerprint = systemBus.map { Fprintd(system: $0.connection) }
        let tpm = TPMDevice.configured(environment)
        server.tpmUnlock = { [keychain] id, pin throws(CofferError) in
            guard let collection = try keychain.collection(id) as? FileCollection else { throw .collectionNotFound(id.rawValue) }
            try collection.unlock(tpm: tpm, pin: pin.isEmpty ? nil : pin)
        }
        try server.start()
        server.describe(as: CofferDaemonDescription(
            version: CofferVersion.current, executable: FileSystem.symbolicLinkTarget("/proc/self/exe") ?? CommandLine.arguments[0],
            dataDirectory: directory.hasPrefix("/") ? directory
                : FileSystem.symbolicLinkTarget("/proc/self/cwd").map { "\($0)/\(directory)" } ?? directory,
            pinentryProgram: pinentryProgram, pinentryEnvironment: pinentryEnvironment))
        server.serveTestClock()
        server.startSecretPortal(audit: audit, frontends: SecretServer.standardPortalFrontends.union(portalFrontends))
        let lockTriggers = LockTriggers(server: server, system: systemBus?.connection)
        try lockTriggers.start()
        SyncLoop(keychain: keychain, directory: directory, server: server, log: log).start()
        // Last: a client that finds the name finds everything served and watched.
        try Startup.claimName(on: connection, replace: replace, log: log)
        if case .failure(let error) = systemBusResult { log(Startup.noSystemBus(error)) }
        log("serving org.freedesktop.secrets from \(directory) as \(connection.uniqueName)")
        if server.hasNoCollection { log("warning: \(SecretServer.noCollectionYet)") }
        readiness?.ready(logSocket: logSocket)
        withExtendedLifetime(lockTriggers) { connection.run() }
        audit.flush()   // refusals counted and not yet written
        _ = systemBus?.stop()
        log("stopped")
    }
}
