import CofferCrypto
import SystemKit

/// The terminal for prompts: `/dev/tty` (the controlling terminal), so that prompts work even
/// when stdin and stdout are redirected. Passwords and typed secrets are read with echo off.
enum Terminal {
    /// Longest line accepted at a prompt, in bytes.
    static let maxLineBytes = 4096

    /// Whether stdin is a terminal.
    static var stdinIsTerminal: Bool { FileDescriptor.standardInput.isTerminal }

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
        return try TerminalEcho.off(on: tty.readFD) {
            tty.write(prompt)
            let line = try readLine(tty.readFD)
            tty.write("\n")
            return line
        }
    }

    /// Asks `question` with echo on and returns the answer (trimmed); nil without a terminal.
    static func ask(_ question: String) throws -> String? {
        guard let tty = open() else { return nil }
        defer { tty.close() }
        tty.write(question)
        let line = try readLine(tty.readFD)
        let text = line.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) }
        return text.trimmingWhitespace()
    }

    /// Reads one line, byte by byte (never past the newline), into secure memory.
    static func readLine(_ descriptor: FileDescriptor) throws -> SecureBytes {
        try SecureInputReader(descriptor: descriptor).readLine(limit: maxLineBytes).0
    }

    /// An open terminal: /dev/tty, or stdin/stderr when stdin is a terminal but /dev/tty
    /// cannot be opened (no controlling terminal).
    struct Handle {
        let readFD: FileDescriptor
        let writeFD: FileDescriptor
        let owned: Bool

        func write(_ text: String) {
            Output.write(Array(text.utf8), to: writeFD)
        }

        func close() {
            if owned { readFD.close() }
        }
    }

    static func open() -> Handle? {
        if let tty = try? FileDescriptor.open("/dev/tty", .readWrite, options: .noControllingTerminal) {
            return Handle(readFD: tty, writeFD: tty, owned: true)
        }
        if stdinIsTerminal { return Handle(readFD: .standardInput, writeFD: .standardError, owned: false) }
        return nil
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
