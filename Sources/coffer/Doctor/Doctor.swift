import ArgumentParser
import FoundationEssentials

/// `coffer doctor`: looks at everything that decides whether Coffer serves this session's
/// passwords, and says per finding what to do. It never asks for a password, never prints a
/// secret and never changes anything.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that Coffer serves this session, and say what to fix.",
        discussion: """
        Prints one line per finding: its status (ok, warning or problem), what was checked \
        and found, and for anything not ok what to do ("fix: ..."). It never asks for a \
        password, never prints a secret and changes nothing; every program it asks has a \
        time limit.

        CHECKS
          bus         the session bus, and who owns org.freedesktop.secrets on it
                      (unique name, PID, executable): cofferd, or e.g. gnome-keyring
          activation  which D-Bus activation file the bus would use to start a
                      Secret Service on demand, and whether it starts cofferd
          portal      which xdg-desktop-portal backend would serve the Secret portal
                      (org.freedesktop.impl.portal.Secret), and whether that is Coffer
          autostart   whether the desktop starts gnome-keyring's Secret Service at
                      login (XDG autostart, Hidden=true, OnlyShowIn/NotShowIn)
          units       whether gnome-keyring's systemd user units start it
          store       the store directory: exists, yours, mode 0700, files 0600
          collection  each collection: locked or unlocked, damaged, recovered with
                      losses (and where the set-aside bytes are)
          default     which collection applications store in when they name none
          pinentry    which pinentry program a password prompt would use, and
                      whether it can be shown (display, terminal)
          unit        cofferd.service in the systemd user manager

        The files are looked up as the session bus, xdg-desktop-portal and the desktop \
        look them up, with this shell's XDG_* variables (they may differ from those the \
        bus or the desktop started with).

        With --json, prints an array of objects {"check", "status", "finding", "fix"} \
        ("fix" only when there is one).

        EXIT STATUS
          0  no problem (warnings may have been printed)
          6  at least one problem: see the lines starting with "problem"

        EXAMPLES
          coffer doctor
          coffer doctor --json
        """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the findings as a JSON array.")
    var json = false

    func run() throws {
        let findings = Self.examine(dataDir: global.dataDir, session: SessionPaths(environment: ProcessInfo.processInfo.environment))
        if json {
            Output.write(Finding.json(findings))
        } else {
            findings.map(\.line).forEach(Output.line)
        }
        let problems = findings.filter { $0.status == .problem }.count
        if problems > 0 {
            throw CLIError(status: ExitStatus.problemFound,
                           "\(problems) problem\(problems == 1 ? "" : "s") found; the fix for each is on its line")
        }
    }

    /// Every finding, in the order of the checks.
    static func examine(dataDir: String?, session: SessionPaths) -> [Finding] {
        let bus = BusCheck.probe()
        let activation = ActivationCheck.scan(session)
        let systemd = UserSystemd(session: session)
        let store = StoreCheck.location(dataDir: dataDir, bus: bus, session: session)
        let (storeFindings, storeReadable) = StoreCheck.findings(store)
        // Lock states through cofferd when it serves this store (not with --data-dir).
        let daemon = dataDir == nil && bus.cofferd != nil ? DaemonKeychain.connectIfRunning() : nil
        return [BusCheck.finding(bus, activation: activation.winner),
                ActivationCheck.finding(activation, session: session),
                PortalCheck.finding(PortalCheck.choose(session), bus: bus),
                AutostartCheck.autostartFinding(session),
                AutostartCheck.unitsFinding(systemd)]
            + storeFindings
            + CollectionsCheck.findings(store: store, storeReadable: storeReadable, daemon: daemon)
            + SyncCheck.findings(store: store, storeReadable: storeReadable, bus: bus)
            + [PinentryCheck.finding(bus: bus, session: session)]
            + AccessCheck.findings(bus: bus)
            + [UnitCheck.finding(systemd, bus: bus)]
    }
}
