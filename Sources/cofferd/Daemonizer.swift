import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Detaches from the terminal: the parent waits until the child reports that it serves (or
/// failed), so that `cofferd && secret-tool …` never races the start-up.
///
/// `detach()` must come before any libgcrypt or Dispatch use: memory locks (libgcrypt's
/// secure pool) and threads are not inherited by a forked child, so everything that matters
/// has to be set up in the process that serves.
struct Daemonizer {
    private let pipe: Int32

    /// Forks; returns in the child only (the parent exits with the child's start-up result).
    /// The child keeps stdin (to read the `--unlock` password) and the terminal's session
    /// until `leaveTerminal()`.
    static func detach() throws -> Daemonizer {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw POSIXError(.EIO) }
        // Not passed on to programs the daemon runs (pinentry).
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let pid = fork()
        guard pid >= 0 else {
            close(fds[0])
            close(fds[1])
            throw POSIXError(.EAGAIN)
        }
        if pid > 0 {
            close(fds[1])
            var byte: UInt8 = 0
            var n: Int
            repeat { n = read(fds[0], &byte, 1) } while n < 0 && errno == EINTR
            exit(n == 1 ? 0 : 1)
        }
        close(fds[0])
        return Daemonizer(pipe: fds[1])
    }

    /// Once stdin has been read: a session of its own, stdin and stdout on /dev/null (stderr
    /// stays: it is the log).
    func leaveTerminal() {
        setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, STDIN_FILENO)
            dup2(null, STDOUT_FILENO)
            if null > STDERR_FILENO { close(null) }
        }
    }

    /// Tells the waiting parent that start-up succeeded.
    func ready() {
        var byte: UInt8 = 1
        _ = write(pipe, &byte, 1)
        close(pipe)
    }
}
