import SecretServiceClient
import SystemKit

/// A D-Bus activation file (`[D-BUS Service]` with `Name=` and `Exec=`) for
/// org.freedesktop.secrets: what the session bus runs when an application asks for the name
/// and nobody owns it.
struct ActivationFile {
    let path: String
    let exec: String?
    /// With a bus that uses systemd activation, the unit systemd is asked to start instead.
    let systemdService: String?

    /// The program `Exec` runs, as written there.
    var program: String? {
        exec?.split(separator: " ").first.map { $0.filter { $0 != "\"" && $0 != "'" } }
    }

    /// Its file name.
    var programName: String? { program?.split(separator: "/").last.map(String.init) }

    var startsCofferd: Bool { programName == "cofferd" }

    /// `cofferd (/usr/local/bin/cofferd, from /usr/local/share/dbus-1/services/org.freedesktop.secrets.service)`.
    var description: String {
        guard let program, let programName else { return "no program (\(path) has no Exec line)" }
        return "\(programName) (\(program), from \(path))"
    }
}

/// Finding 2: which activation file the session bus would use for org.freedesktop.secrets.
///
/// dbus-daemon's standard session service directories, in precedence order (dbus-daemon(1),
/// `<standard_session_servicedirs/>`): $XDG_RUNTIME_DIR/dbus-1/services (where the file must
/// be named `<name>.service`), $XDG_DATA_HOME/dbus-1/services, each $XDG_DATA_DIRS entry's
/// dbus-1/services, then /usr/share/dbus-1/services (its build-time datadir). The first
/// directory holding a file whose `Name=` is the bus name wins; elsewhere files are matched
/// by that line, not by their file name, and two in one directory make the choice arbitrary.
/// The bus daemon uses the environment it was started with; this reads coffer's own.
enum ActivationCheck {
    struct Result {
        /// The file the bus would use, if any.
        let winner: ActivationFile?
        /// Other files naming the bus name, in directories of lower precedence (or beside the
        /// winner).
        let others: [ActivationFile]
        /// Whether the winner's directory holds more than one: the bus picks one arbitrarily.
        let ambiguous: Bool
    }

    static func directories(_ session: SessionPaths) -> [(path: String, strictNaming: Bool)] {
        var result: [(path: String, strictNaming: Bool)] = []
        if let runtime = session.runtimeDirectory { result.append((runtime + "/dbus-1/services", true)) }
        for base in [session.dataHome] + session.dataDirs + ["/usr/share"] {
            let path = base + "/dbus-1/services"
            if !result.contains(where: { $0.path == path }) { result.append((path, false)) }
        }
        return result
    }

    static func scan(_ session: SessionPaths) -> Result {
        let name = SecretServiceClient.busName
        let recommended = name + ".service"
        var found: [[ActivationFile]] = []
        for directory in directories(session) {
            let names = directory.strictNaming
                ? SessionPaths.names(in: directory.path).filter { $0 == recommended }
                : SessionPaths.names(in: directory.path).filter { $0.hasSuffix(".service") }
            // The recommended name first: where the choice is arbitrary, that is the likely one.
            let ordered = names.filter { $0 == recommended } + names.filter { $0 != recommended }
            let files = ordered.compactMap { file -> ActivationFile? in
                let path = directory.path + "/" + file
                guard let keys = KeyFile(path: path), keys.value("Name", in: "D-BUS Service") == name else { return nil }
                return ActivationFile(path: path, exec: keys.value("Exec", in: "D-BUS Service"),
                                      systemdService: keys.value("SystemdService", in: "D-BUS Service"))
            }
            if !files.isEmpty { found.append(files) }
        }
        let all = found.flatMap { $0 }
        return Result(winner: all.first, others: Array(all.dropFirst()), ambiguous: (found.first?.count ?? 0) > 1)
    }

    static func finding(_ result: Result, session: SessionPaths) -> Finding {
        let name = SecretServiceClient.busName
        let install = "install Coffer's activation file where it takes precedence: make install PREFIX=~/.local (it goes to \(session.tilde(session.dataHome))/dbus-1/services/)"
        guard let winner = result.winner else {
            return Finding("activation", .warning,
                           "no D-Bus activation file names \(name): nothing starts a Secret Service when an application asks",
                           fix: install + ", or have cofferd start at login: systemctl --user enable cofferd")
        }
        let others = result.others.isEmpty ? "" : "; it takes precedence over " + result.others.map(\.description).joined(separator: ", ")
        let ambiguity = result.ambiguous ? " (its directory holds more than one file naming \(name), and the bus picks one of them arbitrarily)" : ""
        if winner.startsCofferd {
            let status: Finding.Status = result.ambiguous ? .warning : .ok
            return Finding("activation", status, "an application asking for \(name) starts \(winner.description)\(ambiguity)\(others)",
                           fix: result.ambiguous ? "keep one file naming \(name) in \(dirname(winner.path))" : nil)
        }
        return Finding("activation", .problem,
                       "when nobody owns \(name), the bus starts \(winner.description), not Coffer\(ambiguity)\(others)",
                       fix: install)
    }

    private static func dirname(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }
}
