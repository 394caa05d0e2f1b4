import CofferCore
import SystemKit

/// Finding 7: which pinentry program a password prompt would use now, and whether it can be
/// shown, by the same choice cofferd makes (`PinentryChoice`): in the serving cofferd's
/// environment, with its --pinentry, as it tells them (or /proc shows them); else in this session's, for a
/// cofferd started from here.
enum PinentryCheck {
    static func finding(bus: BusState, session: SessionPaths) -> Finding {
        let program: String?, environment: [String: String], whose: String
        if let cofferd = bus.cofferd, let daemon = cofferd.daemon {
            program = daemon.pinentryProgram
            environment = daemon.pinentryEnvironment
            whose = "cofferd (PID \(cofferd.process.map { String($0.pid) } ?? "?"))"
        } else if let process = bus.cofferd?.process, let daemonEnvironment = process.environment {
            program = PinentryChoice.program(option: process.option("pinentry"), environment: daemonEnvironment)
            environment = PinentryChoice.environment(daemonEnvironment, startedOn: process.terminal)
            whose = "cofferd (PID \(process.pid))"
        } else {
            program = PinentryChoice.program(option: nil, environment: session.environment)
            let terminal = FileDescriptor.standardError.terminalPath ?? FileDescriptor.standardOutput.terminalPath
            environment = PinentryChoice.environment(session.environment, startedOn: terminal)
            whose = "a cofferd started from this session"
        }
        let choice = PinentryChoice(program: program, environment: environment)
        guard let path = choice.path else {
            if program != nil {
                return Finding("pinentry", .problem, "\(whose) cannot ask for passwords: \(choice.missingMessage)",
                               fix: "point --pinentry (or $COFFER_PINENTRY) at an installed pinentry program, or drop it to let cofferd choose")
            }
            if PinentryChoice.candidates(for: environment).isEmpty {
                return Finding("pinentry", .problem,
                               "\(whose) cannot show a password prompt: there is no display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal (GPG_TTY is unset, and it was not started from one)",
                               fix: "give cofferd a display or a terminal: on a desktop, systemctl --user import-environment DISPLAY WAYLAND_DISPLAY and restart it; in a terminal, GPG_TTY=$(tty) cofferd; or unlock without a prompt: coffer unlock")
            }
            return Finding("pinentry", .problem,
                           "\(whose) cannot ask for passwords: none of \(PinentryChoice.candidates(for: environment).joined(separator: ", ")) is installed",
                           fix: "install one: sudo apt install pinentry-gnome3 (desktop) or pinentry-curses (terminal)")
        }
        let reach = program != nil ? "as chosen with --pinentry or $COFFER_PINENTRY"
            : PinentryChoice.hasDisplay(environment) && PinentryChoice.graphicalPrograms.contains(where: { path.hasSuffix("/" + $0) })
                ? "on display \(environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["DISPLAY"] ?? "")"
                : "on terminal \(environment["GPG_TTY"] ?? "")"
        return Finding("pinentry", .ok, "\(whose) would ask for passwords with \(path) (\(reach))")
    }
}
