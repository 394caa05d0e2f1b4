#if canImport(Glibc)
import Glibc
#endif
import CProcess

/// Calls a process makes on itself.
public enum ProcessControl {
    /// `fork(2)`: the child's pid in the parent, nil in the child.
    public static func fork() throws(Errno) -> pid_t? {
        let pid = Glibc.fork()
        guard pid >= 0 else { throw Errno(errno, operation: "fork") }
        return pid == 0 ? nil : pid
    }

    /// This process's id.
    public static var currentID: pid_t { getpid() }

    /// This process's real user id.
    public static var userID: UInt32 { getuid() }

    /// Whether process `pid` runs (`kill(2)` with signal 0), this user's or another's: a process
    /// this one may not signal (EPERM) exists all the same.
    public static func isRunning(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno == EPERM }

    /// The executable process `pid` runs (its `/proc/PID/exe`, less the " (deleted)" the kernel
    /// adds once the file was replaced, as by an upgrade), or nil when it is gone or not this
    /// user's to look at.
    public static func executable(of pid: pid_t) -> String? {
        FileSystem.symbolicLinkTarget("/proc/\(pid)/exe").map { target in
            target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
        }
    }

    /// Waits for child process `pid` to end: its exit status, or 128 + the signal that ended it.
    public static func exitStatus(waitingFor pid: pid_t) throws(Errno) -> Int32 {
        var status: Int32 = 0
        _ = try retryingInterrupted("waitpid \(pid)") { waitpid(pid, &status, 0) }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Sends `signal` to process `pid`.
    public static func send(signal number: Int32, to pid: pid_t) throws(Errno) {
        guard kill(pid, number) == 0 else { throw Errno(errno, operation: "kill \(pid)") }
    }

    /// `setsid(2)`: a session of its own, without a controlling terminal.
    public static func startSession() { _ = setsid() }

    /// `PR_SET_DUMPABLE 0`: other processes of this user can no longer trace this one or read
    /// its memory (cofferd, which holds the keys of every unlocked collection). It also hides
    /// its /proc/PID/exe, so the service could no longer tell which program it is: clients
    /// must not call it. Returns false if it failed.
    @discardableResult public static func makeNonDumpable() -> Bool {
        cprocess_make_non_dumpable() == 0
    }

    /// Ignores `signal` process-wide (SIGPIPE: a write to a closed pipe then fails with EPIPE).
    public static func ignore(signal number: Int32) { _ = signal(number, SIG_IGN) }
}
