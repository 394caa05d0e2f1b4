import Foundation
import SystemKit

/// Detaches from the terminal: the parent waits until the child reports that it serves (or
/// failed), so that `cofferd && secret-tool …` never races the start-up.
///
/// `detach()` must come before any libgcrypt or Dispatch use: memory locks (libgcrypt's
/// secure pool) and threads are not inherited by a forked child, so everything that matters
/// has to be set up in the process that serves.
struct Daemonizer {
    /// The pipe's writing end, to the waiting parent.
    private let pipe: FileDescriptor

    /// Forks; returns in the child only (the parent exits with the child's start-up result).
    /// The child keeps stdin (to read the `--unlock` password) and the terminal's session
    /// until `leaveTerminal()`.
    static func detach() throws -> Daemonizer {
        // Close-on-exec: not passed on to programs the daemon runs (pinentry).
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        let child: pid_t?
        do {
            child = try ProcessControl.fork()
        } catch {
            readEnd.close()
            writeEnd.close()
            throw error
        }
        if child != nil {
            writeEnd.close()
            let report = try? readEnd.read(upTo: 1)
            exit(report?.count == 1 ? 0 : 1)
        }
        readEnd.close()
        return Daemonizer(pipe: writeEnd)
    }

    /// Once stdin has been read: a session of its own, stdin and stdout on /dev/null (stderr
    /// stays: it is the log).
    func leaveTerminal() {
        ProcessControl.startSession()
        guard let null = try? FileDescriptor.open("/dev/null", .readWrite) else { return }
        try? null.duplicate(as: .standardInput)
        try? null.duplicate(as: .standardOutput)
        if null.rawValue > FileDescriptor.standardError.rawValue { null.close() }
    }

    /// Tells the waiting parent that start-up succeeded.
    func ready() {
        try? pipe.writeAll([1])
        pipe.close()
    }
}
