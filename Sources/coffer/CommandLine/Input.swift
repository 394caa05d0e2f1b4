import CofferCore
import CofferCrypto
import SystemKit

/// Where passwords and secrets come from, in the order a command needs them.
///
/// - Interactive: a no-echo prompt on the terminal (`/dev/tty`). New passwords and typed
///   secrets are asked twice.
/// - `--password-stdin`: each password is one line of stdin (a trailing "\r" is dropped);
///   a secret is whatever follows those lines, to end of file.
/// - Without `--password-stdin`, a non-terminal stdin holds only the secret, read to end of
///   file with one trailing "\n" dropped unless `--raw`.
///
/// Passwords never come from argv or the environment. Everything read lands in secure memory.
final class InputSource {
    let passwordFromStdin: Bool
    private let stdinIsTerminal = Terminal.stdinIsTerminal
    private var stdinExhausted = false

    init(passwordFromStdin: Bool) {
        self.passwordFromStdin = passwordFromStdin
    }

    /// Whether passwords are asked on the terminal (so a wrong one may be asked again).
    var asksOnTerminal: Bool { !(passwordFromStdin && !stdinIsTerminal) }

    /// The password of `collection` (or another secret of it: `what`).
    func password(for collection: CollectionID, prompt: String? = nil, what: String = "password") throws -> SecureBytes {
        if passwordFromStdin && !stdinIsTerminal {
            return try stdinLine(what: "the \(what) of '\(collection)'")
        }
        try requireTerminal(for: "the \(what) of '\(collection)'")
        return try Terminal.readHidden(prompt: prompt ?? "Password for '\(collection)': ")
    }

    /// With `--password-stdin`, reads the password line that a command does not need after
    /// all (the daemon has `collection` unlocked) and wipes it; a missing line is no error.
    func skipStdinPassword(for collection: CollectionID) {
        guard passwordFromStdin && !stdinIsTerminal else { return }
        if let unused = try? stdinLine(what: "the password of '\(collection)'") { unused.removeAll() }
    }

    /// A new password for `collection` (or another secret of it: `what`): asked twice on a
    /// terminal; never empty.
    func newPassword(for collection: CollectionID, what: String = "password") throws -> SecureBytes {
        let password: SecureBytes
        if passwordFromStdin && !stdinIsTerminal {
            password = try stdinLine(what: "the new \(what) of '\(collection)'")
        } else {
            try requireTerminal(for: "the new \(what) of '\(collection)'")
            password = try Terminal.readHidden(prompt: "New \(what) for '\(collection)': ")
            guard !password.isEmpty else { throw CLIError.usage("the \(what) is empty; nothing was changed") }
            let again = try Terminal.readHidden(prompt: "Retype the new \(what): ")
            guard password.constantTimeEquals(again) else {
                throw CLIError.usage("the \(what)s do not match; nothing was changed")
            }
        }
        guard !password.isEmpty else { throw CLIError.usage("the new \(what) is empty; nothing was changed") }
        return password
    }

    /// An item's secret: typed twice at a no-echo prompt when stdin is a terminal; otherwise
    /// the rest of stdin, with one trailing "\n" dropped unless `raw`. Never empty.
    func secret(raw: Bool) throws -> SecureBytes {
        let secret: SecureBytes
        if stdinIsTerminal {
            secret = try Terminal.readHidden(prompt: "Secret: ")
            guard !secret.isEmpty else { throw CLIError.usage("the secret is empty; nothing was stored") }
            let again = try Terminal.readHidden(prompt: "Retype the secret: ")
            guard secret.constantTimeEquals(again) else {
                throw CLIError.usage("the two secrets do not match; nothing was stored")
            }
        } else {
            let all = try stdinRest()
            if !raw, all.count > 0, all[all.count - 1] == UInt8(ascii: "\n") {
                secret = try all.slice(0..<(all.count - 1))
            } else {
                secret = all
            }
        }
        guard !secret.isEmpty else {
            throw CLIError.usage("the secret is empty; nothing was stored. Pipe it to stdin, e.g.: printf %s \"$SECRET\" | coffer add ...")
        }
        guard secret.count <= Limits.maxSecretBytes else {
            throw CLIError.usage("the secret is larger than \(Limits.maxSecretBytes) bytes; nothing was stored")
        }
        return secret
    }

    // MARK: Stdin

    private func requireTerminal(for what: String) throws {
        guard Terminal.isAvailable else {
            throw CLIError.usage("no terminal to ask for \(what); pass it as the first line of stdin with --password-stdin")
        }
    }

    /// The next line of stdin, read byte by byte so that nothing after it is consumed.
    private func stdinLine(what: String) throws -> SecureBytes {
        guard !stdinExhausted else {
            throw CLIError.usage("--password-stdin: stdin ended before \(what); put one password per line")
        }
        let line = SecureInputReader(descriptor: .standardInput)
        let (bytes, sawNewline) = try line.readLine(limit: Terminal.maxLineBytes)
        if !sawNewline {
            stdinExhausted = true
            guard !bytes.isEmpty else {
                throw CLIError.usage("--password-stdin: stdin ended before \(what); put one password per line")
            }
        }
        return bytes
    }

    /// Everything left on stdin, up to the largest secret coffer stores (plus one byte, so
    /// that a trailing newline still fits).
    private func stdinRest() throws -> SecureBytes {
        if stdinExhausted { return try SecureBytes(capacity: 0) }
        stdinExhausted = true
        return try SecureInputReader(descriptor: .standardInput).readToEnd(limit: Limits.maxSecretBytes + 1) {
            CLIError.usage("the secret is larger than \(Limits.maxSecretBytes) bytes; nothing was stored")
        }
    }
}

/// Reads a descriptor straight into secure memory.
struct SecureInputReader {
    let descriptor: FileDescriptor

    /// The next line, without its "\n" and a "\r" before that (see `SecureBytes.readLine`);
    /// and whether a "\n" ended it (false: end of input).
    func readLine(limit: Int) throws -> (SecureBytes, sawNewline: Bool) {
        guard let read = try reading({ try SecureBytes.readLine(from: descriptor, limit: limit) }) else {
            throw CLIError.usage("an input line is longer than \(limit) bytes")
        }
        return (read.line, read.sawNewline)
    }

    /// Everything up to end of input; `tooLarge` if that is more than `limit` bytes.
    func readToEnd(limit: Int, tooLarge: () -> CLIError) throws -> SecureBytes {
        guard let all = try reading({ try SecureBytes.read(toEndOf: descriptor, limit: limit) }) else { throw tooLarge() }
        return all
    }

    /// Runs `read`, turning a failed read into the CLI's error.
    private func reading<R>(_ read: () throws -> R) throws -> R {
        do {
            return try read()
        } catch let error as Errno {
            throw CLIError.storeFailure("cannot read input: \(error.reason)")
        }
    }
}
