/// Finding 9: the state of cofferd.service in the systemd user manager.
enum UnitCheck {
    static let unit = "cofferd.service"

    static func finding(_ systemd: UserSystemd, bus: BusState) -> Finding {
        let enabled: String
        switch systemd.ask("is-enabled", unit) {
        case .failure(.noSystemd):
            return Finding("unit", .ok, "systemctl is not installed: cofferd is started without systemd here")
        case .failure(.unanswered(let why)):
            return Finding("unit", .warning, "cannot tell the state of \(unit): \(why)", fix: "check by hand: systemctl --user status \(unit)")
        case .success(let answer):
            enabled = answer.text
        }
        guard !enabled.isEmpty else {
            let running = bus.cofferd != nil ? " (cofferd runs without it)" : ""
            return Finding("unit", .warning, "\(unit) is not installed\(running), so systemd does not start Coffer at login",
                           fix: "make install PREFIX=~/.local, then systemctl --user enable --now cofferd")
        }
        if enabled.hasPrefix("masked") {
            return Finding("unit", .problem, "\(unit) is masked, so nothing can start it", fix: "systemctl --user unmask cofferd")
        }
        let active: String
        switch systemd.ask("is-active", unit) {
        case .success(let answer) where !answer.text.isEmpty:
            active = answer.text
        case .success:
            return Finding("unit", .warning, "\(unit) is \(enabled); its state is unknown: the user service manager could not be asked (no systemd --user for this session)",
                           fix: "check within your login session: systemctl --user status \(unit)")
        case .failure(.noSystemd), .failure(.unanswered):
            return Finding("unit", .warning, "\(unit) is \(enabled); the user service manager did not answer in time",
                           fix: "check by hand: systemctl --user status \(unit)")
        }
        switch (active, enabled) {
        case ("failed", _):
            return Finding("unit", .problem, "\(unit) failed", fix: "see why: journalctl --user -u cofferd; then systemctl --user restart cofferd")
        case ("active", "enabled"), ("active", "static"), ("active", "alias"):
            return Finding("unit", .ok, "\(unit) is active and \(enabled)")
        case ("active", _):
            return Finding("unit", .warning, "\(unit) is active but \(enabled): it will not start at the next login",
                           fix: "systemctl --user enable cofferd")
        default:
            return Finding("unit", .warning, "\(unit) is \(active) and \(enabled)", fix: "systemctl --user enable --now cofferd")
        }
    }
}
