import ArgumentParser
import CofferCore
import CofferCrypto
import DBusKit
import FoundationEssentials
import Glibc
import SystemKit

/// cofferd's exit statuses (listed in `cofferd --help`).
enum ExitStatus {
    static let success: Int32 = 0
    /// `--stop`: no cofferd serves this bus.
    static let notRunning: Int32 = 1
    /// A bad option or argument.
    static let usage: Int32 = 2
    /// The `--unlock` password does not open the default collection.
    static let locked: Int32 = 3
    /// Another process (another Secret Service) owns org.freedesktop.secrets.
    static let nameTaken: Int32 = 4
    /// Could not start or stop: no session bus, a damaged or unreadable store, a system error.
    static let failure: Int32 = 5
}

/// Why cofferd could not start (or stop): one line for the person who ran it, and the status.
struct StartupError: Error, CustomStringConvertible {
    let description: String
    let status: Int32

    init(_ description: String, status: Int32 = ExitStatus.failure) {
        self.description = description
        self.status = status
    }

    /// Prints what went wrong (or the help or version asked for) as `coffer`'s errors are
    /// printed, one `cofferd: ` line on stderr, and returns the exit status.
    static func report(_ error: any Error) -> Int32 {
        let (message, status): (String, Int32)
        switch error {
        case let error as StartupError:
            (message, status) = (error.description, error.status)
        case let error as DBusError:
            (message, status) = ("cannot use the session bus: \(error.message). Run cofferd in a desktop session, or set DBUS_SESSION_BUS_ADDRESS (dbus-run-session starts a bus for one command)", ExitStatus.failure)
        case let error as CofferError:
            (message, status) = ("cannot open the store: \(error)", ExitStatus.failure)
        case let error as CryptoError:
            (message, status) = ("cannot start: \(error)", ExitStatus.failure)
        case let error as Errno:
            (message, status) = ("cannot start: \(error)", ExitStatus.failure)
        default:
            let code = Cofferd.exitCode(for: error)
            if code == .success {
                // --help, --version.
                let text = Cofferd.fullMessage(for: error)
                if !text.isEmpty { try? FileDescriptor.standardOutput.writeAll(Array((text + "\n").utf8)) }
                return ExitStatus.success
            }
            let text = Cofferd.message(for: error).split(whereSeparator: \.isNewline).map(trimmed)
                .filter { !$0.isEmpty }.joined(separator: "; ")
            (message, status) = code == .validationFailure ? ("\(text) (see: cofferd --help)", ExitStatus.usage)
                                                           : ("unexpected failure: \(text)", ExitStatus.failure)
        }
        Log.line(message)
        return status
    }
}

/// `line` without the blanks at either end.
private func trimmed(_ line: Substring) -> String {
    let start = line.firstIndex { !$0.isWhitespace } ?? line.endIndex
    let end = line.lastIndex { !$0.isWhitespace }.map(line.index(after:)) ?? start
    return String(line[start..<max(start, end)])
}
