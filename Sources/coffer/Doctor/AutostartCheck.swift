import SystemKit

/// Finding 4: whether gnome-keyring's Secret Service would start at the next login (and so
/// compete with cofferd for org.freedesktop.secrets): through XDG autostart, and through its
/// systemd user units.
enum AutostartCheck {
    static let desktopFile = "gnome-keyring-secrets.desktop"
    static let units = ["gnome-keyring-daemon.service", "gnome-keyring-daemon.socket"]

    /// XDG autostart (the Desktop Application Autostart specification): the file of that name
    /// in the most important of $XDG_CONFIG_HOME/autostart and each $XDG_CONFIG_DIRS/autostart
    /// is the only one read; `Hidden=true` there disables it, as do `OnlyShowIn`/`NotShowIn`
    /// excluding every current desktop and a `TryExec` program that is not installed.
    static func autostartFinding(_ session: SessionPaths) -> Finding {
        let directories = ([session.configHome] + session.configDirs).map { $0 + "/autostart" }
        guard let (path, keys) = directories.lazy.map({ $0 + "/" + desktopFile })
            .compactMap({ path in KeyFile(path: path).map { (path, $0) } }).first else {
            return Finding("autostart", .ok, "no \(desktopFile) in \(directories.joined(separator: ", ")): the desktop does not start gnome-keyring's Secret Service at login")
        }
        // Hidden=true in a copy in $XDG_CONFIG_HOME/autostart, the most important directory.
        let override = directories[0] + "/" + desktopFile
        let hide = (path == override ? "" : "mkdir -p \(shellQuoted(directories[0])) && cp \(shellQuoted(path)) \(shellQuoted(override)) && ")
            + "echo Hidden=true >> \(shellQuoted(override))"
        let group = "Desktop Entry"
        if keys.isTrue("Hidden", in: group) {
            return Finding("autostart", .ok, "gnome-keyring's Secret Service autostart is hidden by \(path) (Hidden=true)")
        }
        if let program = keys.value("TryExec", in: group),
           FileSystem.executable(named: program, searchPath: session.environment["PATH"] ?? "/usr/bin:/bin") == nil {
            return Finding("autostart", .ok, "\(path) would not start: its TryExec program \(program) is not installed")
        }
        let desktops = session.desktops
        let only = keys.list("OnlyShowIn", in: group)
        let not = keys.list("NotShowIn", in: group) ?? []
        if desktops.isEmpty, let only {
            return Finding("autostart", .warning,
                           "\(path) starts gnome-keyring's Secret Service at login in \(only.joined(separator: ", ")) sessions (this session names no desktop: XDG_CURRENT_DESKTOP is unset), where it may take org.freedesktop.secrets before cofferd",
                           fix: hide)
        }
        let included = only.map { list in desktops.contains(where: list.contains) } ?? true
        let excluded = desktops.contains(where: not.contains)
        guard included && !excluded else {
            return Finding("autostart", .ok, "\(path) does not start gnome-keyring in this desktop (\(desktops.joined(separator: ":")))")
        }
        return Finding("autostart", .problem,
                       "\(path) starts gnome-keyring's Secret Service at every login\(desktops.isEmpty ? "" : " in " + desktops.joined(separator: ":")), where it may take org.freedesktop.secrets before cofferd",
                       fix: hide)
    }

    /// gnome-keyring's systemd user units, as `systemctl --user is-enabled` says (it reads the
    /// unit files itself, so it answers without a running user manager too).
    static func unitsFinding(_ systemd: UserSystemd) -> Finding {
        var states: [String: String] = [:]
        for unit in units {
            switch systemd.ask("is-enabled", unit) {
            case .failure(.noSystemd):
                return Finding("units", .ok, "systemctl is not installed: no systemd user unit starts gnome-keyring")
            case .failure(.unanswered(let why)):
                return Finding("units", .warning, "cannot tell whether gnome-keyring's user units start it: \(why)",
                               fix: "check by hand: systemctl --user is-enabled \(units.joined(separator: " "))")
            case .success(let answer):
                states[unit] = answer.text.isEmpty ? "not installed" : answer.text
            }
        }
        let service = states[units[0]] ?? "not installed", socket = states[units[1]] ?? "not installed"
        let summary = "\(units[0]) is \(service), \(units[1]) is \(socket)"
        let serviceCanRun = service != "not installed" && !service.hasPrefix("masked")
        let starts = serviceCanRun && (UserSystemd.startsByItself(service) || UserSystemd.startsByItself(socket))
        guard starts else {
            return Finding("units", .ok, "gnome-keyring's systemd user units do not start it (\(summary))")
        }
        return Finding("units", .problem,
                       "gnome-keyring's systemd user units start it at login or on first use of its socket, where it may take org.freedesktop.secrets before cofferd (\(summary))",
                       fix: "systemctl --user mask --now \(units.joined(separator: " "))")
    }
}
