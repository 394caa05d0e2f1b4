import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a finished child process left behind.
struct RunResult {
    /// The exit status, or 128 + the signal that killed it.
    let status: Int32
    let stdout: [UInt8]
    let stderr: [UInt8]
    let timedOut: Bool

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs a program as a child in a new session (so it has no controlling terminal and
/// cannot open /dev/tty), feeding `stdin` and capturing stdout and stderr; killed with
/// SIGKILL when it outlives `timeout`.
enum CLIProcess {
    /// SIGPIPE ignored in this process, so that a child exiting before reading all its input
    /// makes our write fail with EPIPE rather than kill the test runner.
    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN); () }()

    static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = [],
                    environment: [String: String], timeout: Double = 60) throws -> RunResult {
        _ = ignoreSIGPIPE
        let input = try cloexecPipe(), output = try cloexecPipe(), errors = try cloexecPipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        if let closeFrom = symbol("posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(closeFrom, to: AddCloseFrom.self)(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc >= 2.26)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setsid))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(input[0])
        close(output[1])
        close(errors[1])
        guard spawned == 0 else {
            close(input[1]); close(output[0]); close(errors[0])
            throw POSIXError(.init(rawValue: spawned) ?? .EIO)
        }

        _ = fcntl(input[1], F_SETFL, fcntl(input[1], F_GETFL) | O_NONBLOCK)
        var stdinFD: Int32 = input[1]
        var written = 0
        if stdin.isEmpty { close(stdinFD); stdinFD = -1 }
        var stdoutFD = output[0], stderrFD = errors[0]
        var collectedOut: [UInt8] = [], collectedErr: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false

        while stdoutFD >= 0 || stderrFD >= 0 {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                kill(pid, SIGKILL)
                timedOut = true
                break
            }
            var fds: [pollfd] = []
            if stdinFD >= 0 { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
            if stdoutFD >= 0 { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if stderrFD >= 0 { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 200)))
            if ready < 0 && errno != EINTR { break }
            for entry in fds where entry.revents != 0 {
                if entry.fd == stdinFD {
                    let n = stdin[written...].withUnsafeBytes { write(stdinFD, $0.baseAddress, $0.count) }
                    if n > 0 { written += n }
                    if (n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin.count {
                        close(stdinFD)
                        stdinFD = -1
                    }
                } else {
                    let n = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        if entry.fd == stdoutFD { collectedOut += buffer[0..<n] } else { collectedErr += buffer[0..<n] }
                    } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                        close(entry.fd)
                        if entry.fd == stdoutFD { stdoutFD = -1 } else { stderrFD = -1 }
                    }
                }
            }
        }
        for fd in [stdinFD, stdoutFD, stderrFD] where fd >= 0 { close(fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return RunResult(status: code, stdout: collectedOut, stderr: collectedErr, timedOut: timedOut)
    }

    // glibc functions Swift's Glibc module does not export (they need _GNU_SOURCE).
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)   // RTLD_DEFAULT
    }

    /// A pipe whose ends are close-on-exec from the start, so that children spawned at the same
    /// time by other tests do not inherit them (which would delay our EOF).
    private static func cloexecPipe() throws -> [Int32] {
        var fds: [Int32] = [-1, -1]
        if let pipe2 = symbol("pipe2") {
            guard unsafeBitCast(pipe2, to: Pipe2.self)(&fds, O_CLOEXEC) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
        } else {
            guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        return fds
    }
}
