import Synchronization
import SystemKit

/// cofferd's log: one line per event, never a secret. On standard error (the journal under
/// systemd, or the terminal in the foreground) until `useSystemLog` — called once a detached
/// cofferd serves, after which nothing is written to the terminal it was started from.
///
/// Written with write(2), errors ignored: standard error may be a closed pipe or a hung-up
/// terminal, and FileHandle.write traps on EPIPE or EIO.
enum Log {
    private static let systemLog = Mutex<SystemLog?>(nil)

    static let line: @Sendable (String) -> Void = { message in
        if let log = systemLog.withLock({ $0 }) {
            log.write(message, severity: message.hasPrefix("warning:") ? .warning : .info)
        } else {
            try? FileDescriptor.standardError.writeAll(Array("cofferd: \(message)\n".utf8))
        }
    }

    /// From now on, lines go to the system log at `socket` (as `cofferd[PID]: …`).
    static func useSystemLog(at socket: String) {
        systemLog.withLock { $0 = SystemLog(identifier: "cofferd", socketPath: socket) }
    }
}
