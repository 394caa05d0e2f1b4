#if canImport(Glibc)
import Glibc
#endif

/// Turns a terminal's echo off for the length of a prompt, and puts it back even when a signal
/// (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ends the process meanwhile.
public enum TerminalEcho {
    /// Runs `body` with echo off on `terminal` (input still comes a line at a time); if the
    /// terminal's settings cannot be read, runs it with echo as it is.
    public static func off<R>(on terminal: FileDescriptor, _ body: () throws -> R) rethrows -> R {
        var saved = termios()
        guard tcgetattr(terminal.rawValue, &saved) == 0 else { return try body() }
        var hidden = saved
        hidden.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        hidden.c_lflag |= tcflag_t(ICANON)
        RestoreOnSignal.arm(fd: terminal.rawValue, saved: saved)
        _ = tcsetattr(terminal.rawValue, TCSAFLUSH, &hidden)
        defer {
            _ = tcsetattr(terminal.rawValue, TCSAFLUSH, &saved)
            RestoreOnSignal.disarm()
        }
        return try body()
    }
}

/// Restores the terminal's settings if a signal ends the process during `TerminalEcho.off`.
private enum RestoreOnSignal {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func arm(fd: Int32, saved: termios) {
        Self.saved = saved
        Self.fd = fd
        for number in signals {
            signal(number) { received in
                if RestoreOnSignal.fd >= 0 { _ = tcsetattr(RestoreOnSignal.fd, TCSAFLUSH, &RestoreOnSignal.saved) }
                signal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func disarm() {
        for number in signals { signal(number, SIG_DFL) }
        fd = -1
    }
}
