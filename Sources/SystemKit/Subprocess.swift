import CProcess
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public enum Termination: Equatable, Sendable {
    /// It exited with this status.
    case exited(Int32)
    /// This signal ended it.
    case signalled(Int32)
    /// It was reaped elsewhere (or SIGCHLD is ignored), so how it ended is not known.
    case unknown

    /// From a raw `waitpid` status.
    init(status: Int32) {
        self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
    }
}

/// A child process started with `posix_spawn`: the one way Coffer starts programs.
///
/// The child starts with an empty signal mask and default signal dispositions (the threads of
/// a test runner or a daemon block signals, and a child would keep that mask and so ignore
/// SIGTERM), inherits no descriptor but its standard three, and is reaped exactly once: after
/// that it is no longer signalled, since its pid may belong to another process by then.
public final class Subprocess: Sendable {
    public let pid: pid_t
    /// How it ended, once reaped.
    private let ended = Mutex<Termination?>(nil)

    /// Starts `path` (a path, not looked up in `PATH`) with `arguments` after argv[0] and
    /// `environment` as its whole environment. Its standard input, output and error are the
    /// given descriptors (nil: this process's own); with `workingDirectory` it starts there,
    /// with `newSession` in a session of its own (so without a controlling terminal).
    public init(_ path: String, arguments: [String] = [], environment: [String: String],
                standardInput: FileDescriptor? = nil, standardOutput: FileDescriptor? = nil,
                standardError: FileDescriptor? = nil, workingDirectory: String? = nil,
                newSession: Bool = false) throws(Errno) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO),
                                 (standardError, STDERR_FILENO)] {
            if let source { posix_spawn_file_actions_adddup2(&actions, source.rawValue, target) }
        }
        _ = cprocess_spawn_add_closefrom(&actions, 3)   // without it, close-on-exec still holds
        if let workingDirectory {
            let code = cprocess_spawn_add_chdir(&actions, workingDirectory)
            guard code == 0 else { throw Errno(code, operation: "posix_spawn_file_actions_addchdir_np") }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newSession { flags |= cprocess_spawn_setsid_flag() }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = [path] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let code = cprocess_spawn(&child, path, &actions, &attributes, Self.laidEndToEnd(argv), argv.count,
                                  Self.laidEndToEnd(envp), envp.count)
        guard code == 0 else { throw Errno(code, operation: "posix_spawn \(path)") }
        pid = child
    }

    /// `strings` as C strings one after the other, each ending in a NUL (as `cprocess_spawn`
    /// takes them). A NUL inside a string ends it there, as in any C string.
    private static func laidEndToEnd(_ strings: [String]) -> [CChar] {
        var block: [CChar] = []
        for string in strings {
            block += string.utf8.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            block.append(0)
        }
        return block
    }

    // MARK: Waiting

    /// How the child ended if it has (reaping it), nil while it runs.
    public func exitStatus() -> Termination? {
        ended.withLock { ended in
            if ended == nil { ended = Self.reap(pid) }
            return ended
        }
    }

    /// Waits for the child to end and reaps it.
    @discardableResult
    public func wait() -> Termination {
        // Wait without reaping (and without the lock), so that `send(signal:)` and
        // `exitStatus()` stay usable meanwhile; then reap under the lock.
        var info = siginfo_t()
        _ = try? retryingInterrupted("waitid") { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
        return exitStatus() ?? .unknown
    }

    /// Waits up to `timeout` for the child to end; nil if it still runs.
    public func wait(timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if let status = exitStatus() { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Sends `signal` to the child unless it was already reaped.
    public func send(signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// One non-blocking `waitpid`: how the child ended, or nil while it runs.
    private static func reap(_ pid: pid_t) -> Termination? {
        var status: Int32 = 0
        do {
            let reaped = try retryingInterrupted("waitpid") { waitpid(pid, &status, WNOHANG) }
            return reaped == pid ? Termination(status: status) : nil
        } catch {
            return .unknown   // ECHILD: someone else reaped it, or SIGCHLD is ignored
        }
    }
}
