import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Detaches from the terminal: the parent waits until the child reports that it serves (or
/// failed), so that `cofferd && secret-tool …` never races the start-up.
struct Daemonizer {
    private let pipe: Int32

    /// Forks; returns in the child only (the parent exits with the child's start-up result).
    static func detach() throws -> Daemonizer {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw POSIXError(.EIO) }
        let pid = fork()
        guard pid >= 0 else { throw POSIXError(.EAGAIN) }
        if pid > 0 {
            close(fds[1])
            var byte: UInt8 = 0
            let n = read(fds[0], &byte, 1)
            exit(n == 1 ? 0 : 1)
        }
        close(fds[0])
        setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, STDIN_FILENO)
            dup2(null, STDOUT_FILENO)
            close(null)
        }
        return Daemonizer(pipe: fds[1])
    }

    /// Tells the waiting parent that start-up succeeded.
    func ready() {
        var byte: UInt8 = 1
        _ = write(pipe, &byte, 1)
        close(pipe)
    }
}
