import CofferCore
import CofferCrypto
import FoundationEssentials
import Glibc
import Synchronization
import SystemKit

/// Asks for passwords with a pinentry program (the dialogs GnuPG uses: pinentry-gnome3,
/// pinentry-qt, pinentry-gtk-2, pinentry-curses, pinentry-tty), speaking the Assuan protocol
/// to it over its stdin and stdout.
///
/// Each `ask` starts a fresh pinentry child, sends the texts, reads the PIN straight into
/// secure memory, says `BYE` and reaps the child. The whole conversation is bounded by
/// `timeout`; a child that does not answer in time is killed.
///
/// The child gets `environment` as its whole environment (pinentry finds the display through
/// DISPLAY, WAYLAND_DISPLAY and DBUS_SESSION_BUS_ADDRESS there); `GPG_TTY` (or `TTY`), `TERM`,
/// `DISPLAY` and the locale from it are also sent as Assuan options.
public final class Pinentry: PasswordAsker, ConsentAsker {
    /// Why `ask` cannot work when no program was found although the session could show one.
    public static var notFoundMessage: String { PinentryChoice.notFoundMessage }

    private let resolvedPath: String?
    private let missingMessage: String
    private let environment: [String: String]
    private let timeout: Duration
    /// The dialogs on screen now (their processes), and which of them `closeDialogs` closed.
    private let onScreen = Mutex<(running: [ObjectIdentifier: Subprocess], closed: Set<ObjectIdentifier>)>(([:], []))

    /// The absolute (or as given, if it contains a `/`) path of the program `ask` runs, or nil
    /// when none was found.
    public var programPath: String? { resolvedPath }

    /// - program: a path (containing `/`) or a name looked up in the `PATH` of `environment`;
    ///   nil (or empty) tries, in order, the programs that can reach the user in this session
    ///   (see `PinentryChoice`).
    /// - environment: the child's whole environment, also the source of `PATH`, `GPG_TTY`, ...
    /// - timeout: the longest one `ask` may take, user think time included.
    public init(program: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                timeout: Duration = .seconds(300)) {
        self.environment = environment
        self.timeout = timeout
        let choice = PinentryChoice(program: program, environment: environment)
        resolvedPath = choice.path
        missingMessage = choice.missingMessage
    }

    // MARK: Asking

    public func ask(_ request: PasswordRequest) -> PasswordAnswer {
        switch run({ c throws(PinentryFailure) in try converse(c, request) }) {
        case .success(let pin): .password(pin)
        case .failure(.cancelled): .cancelled
        case .failure(.unavailable(let why)): .unavailable(why)
        }
    }

    public func confirm(_ request: ConsentRequest) -> ConsentAnswer {
        let outcome = run { c throws(PinentryFailure) -> PinentryConversation.Confirmation in
            try start(c)
            try c.command("SETTITLE", request.title)
            try c.command("SETDESC", request.description)
            try c.command("SETOK", request.allowOnce)
            if let allowAlways = request.allowAlways {
                try c.command("SETNOTOK", allowAlways, required: false)   // old pinentries: two buttons
            }
            try c.command("SETCANCEL", request.deny)
            return try c.confirm()
        }
        switch outcome {
        case .success(.confirmed): return .allowOnce
        case .success(.notConfirmed): return request.allowAlways == nil ? .deny : .allowAlways
        case .failure(.cancelled): return .deny
        // Unlocking is no answer to a question of access: the cause alone (the caller says what would allow it).
        case .failure(.unavailable(let why)): return .unavailable(why == PinentryChoice.nowhereMessage ? PinentryChoice.nowhereCause : why)
        }
    }

    /// Closes every dialog on screen (the collections they were for just locked): each ends
    /// as if the user had cancelled it.
    public func closeDialogs() {
        onScreen.withLock { state in
            for (key, child) in state.running {
                child.send(signal: SIGTERM)
                state.closed.insert(key)
            }
        }
    }

    /// How a conversation ended without its result.
    private enum Ending: Error {
        case cancelled
        case unavailable(String)
    }

    /// Starts a pinentry, runs `dialogue` with it, and ends it: politely after an answer or a
    /// cancel, by killing it after a timeout or a protocol error.
    private func run<Result>(_ dialogue: (PinentryConversation) throws(PinentryFailure) -> Result) -> Swift.Result<Result, Ending> {
        guard let path = resolvedPath else { return .failure(.unavailable(missingMessage)) }
        let conversation: PinentryConversation
        do {
            conversation = try PinentryConversation(path: path, environment: environment,
                                                    deadline: ContinuousClock.now.advanced(by: timeout))
        } catch {
            return .failure(.unavailable(error.message(program: path)))
        }
        let key = ObjectIdentifier(conversation)
        onScreen.withLock { $0.running[key] = conversation.child }
        let outcome: Swift.Result<Result, PinentryFailure>
        do { outcome = .success(try dialogue(conversation)) } catch { outcome = .failure(error) }
        // Off the list before the child is reaped: `closeDialogs` never signals a reused PID.
        let closed = onScreen.withLock { $0.running[key] = nil; return $0.closed.remove(key) != nil }
        do {
            let result = try outcome.get()
            conversation.finish()
            return .success(result)
        } catch .childGone where closed {
            _ = conversation.kill(grace: .milliseconds(500))
            return .failure(.cancelled)
        } catch .cancelled {
            conversation.finish()
            return .failure(.cancelled)
        } catch .failed(let text) {
            conversation.finish()
            return .failure(.unavailable(text))
        } catch .childGone {
            // It closed its end: most likely it exited; let it finish to learn why.
            let status = conversation.kill(grace: .milliseconds(500))
            return .failure(.unavailable(PinentryFailure.childGone.message(
                program: path, exitStatus: conversation.killedByUs ? nil : status)))
        } catch let failure {
            // Timed out, or it broke the protocol: no polite BYE.
            conversation.kill()
            return .failure(.unavailable(failure.message(program: path)))
        }
    }

    /// The greeting, the options and the timeout: what every dialogue starts with.
    private func start(_ c: PinentryConversation) throws(PinentryFailure) {
        guard case .ok = try c.readReply(pin: nil) else {
            throw .protocolError("pinentry did not greet with OK")
        }
        for option in options() {
            try c.command("OPTION " + option, required: false)   // older pinentries reject some
        }
        let seconds = max(1, timeout.components.seconds + (timeout.components.attoseconds > 0 ? 1 : 0))
        try c.command("SETTIMEOUT \(seconds)", required: false)
    }

    /// The whole dialogue after the child started: greeting, options, texts, GETPIN.
    private func converse(_ c: PinentryConversation, _ request: PasswordRequest) throws(PinentryFailure) -> SecureBytes {
        try start(c)
        try c.command("SETTITLE", request.title)
        try c.command("SETDESC", request.description)
        try c.command("SETPROMPT", request.prompt)
        if let error = request.error, !error.isEmpty {
            try c.command("SETERROR", error)
        }
        if request.confirm {
            try c.command("SETREPEAT", Self.repeatPrompt, required: false)
            try c.command("SETREPEATERROR", Self.mismatchError, required: false)
        }
        let first = try c.getPin()
        guard request.confirm, !first.repeated else { return first.pin }

        // This pinentry ignored SETREPEAT: ask a second time ourselves and compare.
        var pin = first.pin
        for _ in 0..<Self.confirmRounds {
            // pinentry forgets SETERROR after each GETPIN.
            try c.command("SETPROMPT", Self.repeatPrompt)
            let again = try c.getPin()
            if again.pin.constantTimeEquals(pin) { return pin }
            try c.command("SETERROR", Self.mismatchError)
            try c.command("SETPROMPT", request.prompt)
            pin = try c.getPin().pin
        }
        throw .cancelled
    }

    static let repeatPrompt = "Repeat:"
    static let mismatchError = "The passwords do not match."
    /// How often the fallback confirmation re-asks after a mismatch before giving up.
    static let confirmRounds = 5

    /// The Assuan OPTION lines (unescaped name=value) taken from the environment.
    private func options() -> [String] {
        var options: [String] = []
        func add(_ name: String, _ value: String?) {
            guard let value, !value.isEmpty, !value.contains(where: { $0.isNewline }) else { return }
            options.append(name + "=" + value)
        }
        add("ttyname", environment["GPG_TTY"] ?? environment["TTY"])
        add("ttytype", environment["TERM"])
        add("display", environment["DISPLAY"])
        let ctype = [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]].compactMap { $0 }
            .first { !$0.isEmpty }
        let messages = [environment["LC_ALL"], environment["LC_MESSAGES"], environment["LANG"]].compactMap { $0 }
            .first { !$0.isEmpty }
        add("lc-ctype", ctype)
        add("lc-messages", messages)
        return options
    }
}

/// Why a conversation ended without a PIN.
enum PinentryFailure: Error {
    /// The user cancelled (GPG_ERR_CANCELED / GPG_ERR_FULLY_CANCELED).
    case cancelled
    /// pinentry answered ERR (text for the log), or could not show a dialog.
    case failed(String)
    /// The deadline passed.
    case timedOut
    /// The child closed its end (exited) before answering.
    case childGone
    /// The child said something that is not Assuan.
    case protocolError(String)
    /// Starting the child or a system call failed.
    case system(Errno)

    func message(program: String, exitStatus: Termination? = nil) -> String {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        switch self {
        case .cancelled: return "cancelled"
        case .failed(let text): return text
        case .timedOut: return "pinentry timed out"
        case .childGone:
            guard let exitStatus, exitStatus != .unknown else { return "\(name) closed the connection before answering" }
            return "\(name) exited before answering" + Self.describe(exitStatus)
        case .protocolError(let text): return "\(name): \(text)"
        case .system(let error): return "\(name): \(error)"
        }
    }

    private static func describe(_ status: Termination) -> String {
        switch status {
        case .exited(let code): " (exit status \(code))"
        case .signalled(let signal): " (killed by signal \(signal))"
        case .unknown: ""
        }
    }
}
