import SystemKit

/// Which pinentry program asks the user for passwords, or why none can: the choice cofferd
/// makes for its prompts (SecretService's `Pinentry` runs the program) and `coffer doctor`
/// reports. Kept in the core, below both, so that there is one choice.
///
/// Given no program, the first found in `PATH` of the programs that can reach the user in the
/// session: the graphical ones where there is a display (DISPLAY or WAYLAND_DISPLAY), the
/// terminal ones where there is a terminal to draw on (GPG_TTY), and then `pinentry`
/// (whatever the system's alternative points at) where there is either.
public struct PinentryChoice: Sendable {
    public static let graphicalPrograms = ["pinentry-gnome3", "pinentry-qt", "pinentry-gtk-2"]
    public static let terminalPrograms = ["pinentry-curses", "pinentry-tty"]

    /// Why no program was chosen although the session could show one.
    public static let notFoundMessage =
        "no pinentry program found; install pinentry-gnome3 or pinentry-curses, or pass --pinentry"

    /// Why no prompt can be shown in a session without a display or a terminal (the cause alone).
    public static let nowhereCause =
        "no prompt can be shown: there is no display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal (GPG_TTY is unset)"

    /// `nowhereCause`, and what to do for a password prompt.
    public static let nowhereMessage =
        nowhereCause + ". Set GPG_TTY=$(tty) (or DISPLAY) in cofferd's environment, pass --pinentry, or unlock with 'coffer unlock'"

    /// The program that would run: absolute, or as given when that contains a `/`. Nil when
    /// none was found.
    public let path: String?
    /// Why `path` is nil (for the log and the user; never a secret).
    public let missingMessage: String

    /// - program: a path (containing `/`) or a name looked up in the `PATH` of `environment`;
    ///   nil or empty chooses among `candidates(for:)`.
    /// - environment: the environment the program would run in (source of `PATH`, DISPLAY,
    ///   GPG_TTY ...).
    public init(program: String?, environment: [String: String]) {
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        if let program, !program.isEmpty {
            path = FileSystem.executable(named: program, searchPath: searchPath)
            missingMessage = "pinentry program '\(program)' not found or not executable"
        } else {
            let candidates = Self.candidates(for: environment)
            path = candidates.lazy.compactMap { FileSystem.executable(named: $0, searchPath: searchPath) }.first
            missingMessage = candidates.isEmpty ? Self.nowhereMessage : Self.notFoundMessage
        }
    }

    /// The program cofferd is told to use: its `--pinentry` option, else `$COFFER_PINENTRY`;
    /// nil when neither is given (then it chooses, see `init`).
    public static func program(option: String?, environment: [String: String]) -> String? {
        option ?? environment["COFFER_PINENTRY"]
    }

    /// The programs worth trying in a session with `environment`: graphical ones only with a
    /// display, terminal ones only with a terminal (`GPG_TTY`), `pinentry` with either.
    public static func candidates(for environment: [String: String]) -> [String] {
        let display = hasDisplay(environment)
        let terminal = !(environment["GPG_TTY"] ?? "").isEmpty
        return (display ? graphicalPrograms : []) + (terminal ? terminalPrograms : []) + (display || terminal ? ["pinentry"] : [])
    }

    /// Whether `environment` names a display (X11 or Wayland) for a graphical dialog.
    public static func hasDisplay(_ environment: [String: String]) -> Bool {
        [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
    }

    /// The environment pinentry runs in: `environment`, with `GPG_TTY` set to `terminal` (the
    /// one cofferd was started from) when it is not set already.
    public static func environment(_ environment: [String: String], startedOn terminal: String?) -> [String: String] {
        var result = environment
        if (result["GPG_TTY"] ?? "").isEmpty, let terminal { result["GPG_TTY"] = terminal }
        return result
    }
}
