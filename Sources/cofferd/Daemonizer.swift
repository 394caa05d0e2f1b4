import FoundationEssentials
import Glibc
import SystemKit

/// Detaches from the terminal: the parent waits until the child reports that it serves (or
/// failed, with the child's exit status), so that `cofferd && secret-tool …` never races the
/// start-up. Start-up messages and errors reach the terminal; once it serves, the daemon logs
/// to the system log and writes nothing to the terminal.
///
/// `detach()` must come before any libgcrypt or Dispatch use: memory locks (the secure
/// memory) and threads are not inherited by a forked child, so everything that matters
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
        if let child {
            writeEnd.close()
            if let report = try? readEnd.read(upTo: 1), report.count == 1 { exit(ExitStatus.success) }
            // It failed, and said why on the terminal: its status is ours.
            exit((try? ProcessControl.exitStatus(waitingFor: child)) ?? ExitStatus.failure)
        }
        readEnd.close()
        return Daemonizer(pipe: writeEnd)
    }

    /// Once stdin has been read: a session of its own, stdin and stdout on /dev/null (stderr
    /// stays until `ready`: start-up errors go to the terminal).
    func leaveTerminal() {
        ProcessControl.startSession()
        Self.sendToNowhere([.standardInput, .standardOutput])
    }

    /// Tells the waiting parent that start-up succeeded; from now on the log goes to the system
    /// log at `logSocket`, and stderr to /dev/null.
    func ready(logSocket: String) {
        Log.useSystemLog(at: logSocket)
        Self.sendToNowhere([.standardError])
        try? pipe.writeAll([1])
        pipe.close()
    }

    private static func sendToNowhere(_ descriptors: [FileDescriptor]) {
        guard let null = try? FileDescriptor.open("/dev/null", .readWrite) else { return }
        for descriptor in descriptors { try? null.duplicate(as: descriptor) }
        if null.rawValue > FileDescriptor.standardError.rawValue { null.close() }
    }
}
