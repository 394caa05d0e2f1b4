import CofferCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The terminal for prompts: `/dev/tty` (the controlling terminal), so that prompts work even
/// when stdin and stdout are redirected. Passwords and typed secrets are read with echo off.
enum Terminal {
    /// Longest line accepted at a prompt, in bytes.
    static let maxLineBytes = 4096

    /// Whether stdin is a terminal.
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Whether there is a terminal to prompt on.
    static var isAvailable: Bool {
        guard let tty = open() else { return false }
        tty.close()
        return true
    }

    /// Asks `prompt` with echo off and returns the line typed (without its newline) in secure
    /// memory. Ctrl-C restores the terminal before the process dies.
    static func readHidden(prompt: String) throws -> SecureBytes {
        guard let tty = open() else {
            throw CLIError.usage("no terminal to ask for input on; use --password-stdin")
        }
        defer { tty.close() }
        var saved = termios()
        let canHide = tcgetattr(tty.readFD, &saved) == 0
        if canHide {
            var hidden = saved
            hidden.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            hidden.c_lflag |= tcflag_t(ICANON)
            EchoGuard.arm(fd: tty.readFD, saved: saved)
            _ = tcsetattr(tty.readFD, TCSAFLUSH, &hidden)
        }
        defer {
            if canHide {
                _ = tcsetattr(tty.readFD, TCSAFLUSH, &saved)
                EchoGuard.disarm()
            }
        }
        tty.write(prompt)
        let line = try readLine(fd: tty.readFD)
        tty.write("\n")
        return line
    }

    /// Asks `question` with echo on and returns the answer (trimmed); nil without a terminal.
    static func ask(_ question: String) throws -> String? {
        guard let tty = open() else { return nil }
        defer { tty.close() }
        tty.write(question)
        let line = try readLine(fd: tty.readFD)
        let text = line.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) }
        return text.trimmingWhitespace()
    }

    /// Reads one line, byte by byte (never past the newline), into secure memory.
    static func readLine(fd: Int32) throws -> SecureBytes {
        try SecureBytesReader(fd: fd).readLine(limit: maxLineBytes).0
    }

    /// An open terminal: /dev/tty, or stdin/stderr when stdin is a terminal but /dev/tty
    /// cannot be opened (no controlling terminal).
    struct Handle {
        let readFD: Int32
        let writeFD: Int32
        let owned: Bool

        func write(_ text: String) {
            Output.write(Array(text.utf8), to: writeFD)
        }

        func close() {
            if owned { _ = Glibc.close(readFD) }
        }
    }

    static func open() -> Handle? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        if fd >= 0 { return Handle(readFD: fd, writeFD: fd, owned: true) }
        if stdinIsTerminal { return Handle(readFD: STDIN_FILENO, writeFD: STDERR_FILENO, owned: false) }
        return nil
    }
}

/// Restores the terminal's echo if a signal ends the process during a hidden prompt.
private enum EchoGuard {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func arm(fd: Int32, saved: termios) {
        Self.saved = saved
        Self.fd = fd
        for number in signals {
            signal(number) { received in
                if EchoGuard.fd >= 0 { _ = tcsetattr(EchoGuard.fd, TCSAFLUSH, &EchoGuard.saved) }
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

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
