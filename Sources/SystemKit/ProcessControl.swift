#if canImport(Glibc)
import Glibc
#endif

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

    /// Whether process `pid` runs and this process may signal it (`kill(2)` with signal 0).
    public static func isRunning(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 }

    /// `setsid(2)`: a session of its own, without a controlling terminal.
    public static func startSession() { _ = setsid() }

    /// Ignores `signal` process-wide (SIGPIPE: a write to a closed pipe then fails with EPIPE).
    public static func ignore(signal number: Int32) { _ = signal(number, SIG_IGN) }
}
