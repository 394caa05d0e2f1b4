import DBusKit
import SecretServiceClient
import SecretServiceProtocol

/// Who owns org.freedesktop.secrets on the session bus, as the bus daemon tells.
enum BusState {
    /// No session bus: DBUS_SESSION_BUS_ADDRESS unset and no $XDG_RUNTIME_DIR/bus.
    case noBus
    /// The bus runs, and nobody owns the name.
    case unowned
    case owned(SecretServiceOwner)
    /// The bus did not answer as it should (the text says how).
    case failed(String)

    /// The owner when it is cofferd.
    var cofferd: SecretServiceOwner? {
        if case .owned(let owner) = self, owner.isCofferd { return owner }
        return nil
    }
}

/// The connection owning org.freedesktop.secrets and the process behind it.
struct SecretServiceOwner {
    let uniqueName: String
    /// From GetConnectionUnixProcessID; nil when the bus could not tell.
    let process: ProcessDetails?
    /// What the owner tells of itself when it is cofferd (`org.coffer.Daemon`): cofferd is
    /// non-dumpable, so /proc hides its executable and environment from its user.
    let daemon: CofferDaemonDescription?
    /// Its unlocked collections' policies and items without an owner, when it is cofferd.
    let collections: [String: CollectionAccessSummary]?
    /// What its synced collections' last rounds found wrong, when it is cofferd.
    let syncProblems: [String: [String]]?

    var programName: String {
        daemon?.executable.split(separator: "/").last.map(String.init) ?? process?.programName ?? "an unknown program"
    }
    var isCofferd: Bool { daemon != nil || process?.programName == "cofferd" }
    var isGnomeKeyring: Bool { process?.programName == "gnome-keyring-daemon" }

    /// `cofferd (PID 1234, /usr/bin/cofferd)`.
    var description: String {
        guard let process else { return "\(programName) (bus connection \(uniqueName))" }
        let executable = daemon?.executable ?? process.executable
        return "\(programName) (PID \(process.pid)" + (executable.map { ", \($0)" } ?? "") + ")"
    }
}

/// Finding 1: is there a session bus, and who serves org.freedesktop.secrets on it.
enum BusCheck {
    /// Asks the session bus (never starting one, and never starting a service: only the bus
    /// daemon itself is called).
    static func probe() -> BusState {
        guard let connection = DBusConnection.runningSessionBus() else { return .noBus }
        defer { connection.close() }
        let owner: String
        do {
            owner = try connection.nameOwner(SecretServiceClient.busName)
        } catch {
            if error.name == DBusError.Name.nameHasNoOwner { return .unowned }
            return .failed("the session bus did not say who owns \(SecretServiceClient.busName): \(error.message)")
        }
        let pid = try? connection.unixProcessID(of: owner)
        let daemon = try? CofferDaemonDescription.read(from: owner, on: connection)
        return .owned(SecretServiceOwner(uniqueName: owner, process: pid.map { ProcessDetails(pid: $0) }, daemon: daemon,
                                         collections: daemon == nil ? nil : try? CollectionAccessSummary.read(from: owner, on: connection),
                                         syncProblems: daemon == nil ? nil : try? SyncProblems.read(from: owner, on: connection)))
    }

    static func finding(_ state: BusState, activation: ActivationFile?) -> Finding {
        let name = SecretServiceClient.busName
        switch state {
        case .noBus:
            return Finding("bus", .problem,
                           "there is no session bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist), so no application can reach a Secret Service",
                           fix: "run coffer inside your desktop session, or start a bus for this shell: dbus-run-session -- $SHELL")
        case .failed(let reason):
            return Finding("bus", .problem, reason, fix: "check that the session bus works: busctl --user list")
        case .unowned:
            if let activation, activation.startsCofferd {
                return Finding("bus", .warning,
                               "nobody owns \(name) now; the bus starts cofferd when an application first asks (\(activation.path))",
                               fix: "to have it running from login instead: systemctl --user enable --now cofferd")
            }
            return Finding("bus", .problem, "nobody owns \(name): no Secret Service is running, and applications cannot store or read passwords",
                           fix: "start Coffer: systemctl --user enable --now cofferd (after 'make install'), or run: cofferd")
        case .owned(let owner) where owner.isCofferd:
            return Finding("bus", .ok, "\(name) is served by \(owner.description)")
        case .owned(let owner):
            // gnome-keyring claims the name without allowing replacement (other providers may allow it).
            let copyAndStop = "copy its items first: coffer import --from-bus; then "
            let start = "then start Coffer: systemctl --user start cofferd, or cofferd"
            guard owner.isGnomeKeyring else {
                return Finding("bus", .problem, "\(name) is served by \(owner.description), not by Coffer",
                               fix: copyAndStop + "stop it and keep it from starting again; " + start + " (or cofferd --replace, if it allows replacement)")
            }
            return Finding("bus", .problem, "\(name) is served by \(owner.description), not by Coffer",
                           fix: copyAndStop + "stop it for good: systemctl --user mask --now gnome-keyring-daemon.service gnome-keyring-daemon.socket, and hide its autostart (see the autostart line and the README section 'Switching from gnome-keyring, and back'); " + start + ". gnome-keyring does not hand the name over, so cofferd --replace does not help while it runs")
        }
    }
}
