import Foundation
import Glibc

/// Errors starting or talking to a child process.
public enum ChildProcessError: Error, CustomStringConvertible {
    case system(String, Int32)
    case notFound(String)
    case timedOut(String)

    public var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .notFound(let what): return "not found: \(what)"
        case .timedOut(let what): return "timed out: \(what)"
        }
    }
}

/// How a child process ended.
public struct ChildResult: Sendable, CustomStringConvertible {
    /// Exit code if the child exited normally.
    public let exitCode: Int32?
    /// Signal number if a signal ended it.
    public let signal: Int32?
    /// True when `wait(timeout:)` had to kill the child.
    public let timedOut: Bool
    public let stdoutBytes: [UInt8]
    public let stderrBytes: [UInt8]
    /// stdout as text (decoded on access; invalid UTF-8 is repaired).
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    /// stderr as text (decoded on access).
    public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }

    public var succeeded: Bool { exitCode == 0 }

    public var description: String {
        let how = exitCode.map { "exit \($0)" } ?? signal.map { "signal \($0)" } ?? "?"
        return "\(how)\(timedOut ? " (timed out)" : ""); stdout: \(stdout.debugDescription); stderr: \(stderr.debugDescription)"
    }
}

/// A child process started with `posix_spawn`, with its stdin fed from memory and its stdout
/// and stderr captured.
///
/// The child starts with an empty signal mask and default dispositions (Swift Testing threads
/// block most signals and a plain spawn would pass that mask on, making the child ignore
/// SIGTERM). It inherits no descriptors other than its three standard streams. Waiting always
/// has a hard timeout after which the child is SIGKILLed, and `deinit` kills a child still running.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let executable: String

    private let state = NSCondition()
    private var stdoutData: [UInt8] = []
    private var stderrData: [UInt8] = []
    private var pumpDone = false
    private var status: Int32?        // raw waitpid status once reaped
    private var killedOnTimeout = false

    /// Starts `executable` (an absolute path, or a name looked up in `PATH`).
    /// - environment: the full environment (nil: inherit this process's environment).
    /// - stdin: bytes written to the child's stdin, which is then closed (nil: empty stdin).
    public init(_ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
                stdin: [UInt8]? = nil, workingDirectory: String? = nil) throws {
        guard let path = Executables.resolve(executable) else { throw ChildProcessError.notFound(executable) }
        self.executable = path

        let input = try LibCExtras.cloexecPipe()
        let output = try LibCExtras.cloexecPipe()
        let errors = try LibCExtras.cloexecPipe()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        LibCExtras.addCloseFrom(&actions, 3)
        if let workingDirectory {
            guard LibCExtras.addChdir(&actions, workingDirectory) else {
                throw ChildProcessError.system("posix_spawn_file_actions_addchdir_np", ENOSYS)
            }
        }
        _ = ChildProcess.ignoreSIGPIPE

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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = [path] + arguments
        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var childPID: pid_t = 0
        let rc = withCStrings(argv) { cargv in
            withCStrings(env) { cenv in
                posix_spawn(&childPID, path, &actions, &attributes, cargv, cenv)
            }
        }
        close(input.read)
        close(output.write)
        close(errors.write)
        guard rc == 0 else {
            close(input.write)
            close(output.read)
            close(errors.read)
            throw ChildProcessError.system("posix_spawn \(path)", rc)
        }
        pid = childPID

        let pump = Thread { [self] in
            self.pump(stdin: stdin ?? [], inputFD: input.write, outputFD: output.read, errorFD: errors.read)
        }
        pump.name = "ChildProcess \(pid) I/O"
        pump.start()
    }

    /// Writing to a child that already exited must give EPIPE, not kill the test process.
    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    deinit {
        if reap(blocking: false) == nil {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    // MARK: Output

    /// Everything the child wrote to stdout so far.
    public var stdout: String { state.lock(); defer { state.unlock() }; return String(decoding: stdoutData, as: UTF8.self) }
    /// Everything the child wrote to stderr so far.
    public var stderr: String { state.lock(); defer { state.unlock() }; return String(decoding: stderrData, as: UTF8.self) }

    /// Waits until the captured stdout satisfies `predicate` (true), or the timeout passes or the
    /// output ends without it (false).
    public func waitForStdout(timeout: TimeInterval, until predicate: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        state.lock()
        defer { state.unlock() }
        while true {
            if predicate(String(decoding: stdoutData, as: UTF8.self)) { return true }
            if pumpDone { return false }
            if !state.wait(until: min(deadline, Date().addingTimeInterval(0.05))), Date() >= deadline { return false }
        }
    }

    // MARK: Waiting and stopping

    /// Whether the child is still running.
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits up to `timeout` seconds for the child to exit; then SIGKILLs it. Returns how it
    /// ended plus all captured output.
    @discardableResult
    public func wait(timeout: TimeInterval) -> ChildResult {
        let deadline = Date().addingTimeInterval(timeout)
        while reap(blocking: false) == nil {
            if Date() >= deadline {
                state.lock(); killedOnTimeout = true; state.unlock()
                kill(pid, SIGKILL)
                _ = reap(blocking: true)
                break
            }
            usleep(2_000)
        }
        waitForPump(timeout: 2)
        return result()
    }

    /// Sends SIGTERM, waits up to `grace` seconds, then SIGKILLs. Returns how it ended.
    @discardableResult
    public func terminate(grace: TimeInterval = 3) -> ChildResult {
        if reap(blocking: false) == nil { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(grace)
        while reap(blocking: false) == nil {
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = reap(blocking: true)
                break
            }
            usleep(2_000)
        }
        waitForPump(timeout: 2)
        return result()
    }

    /// Sends `signal` to the child.
    public func send(signal: Int32) { if reap(blocking: false) == nil { kill(pid, signal) } }

    private func result() -> ChildResult {
        state.lock()
        defer { state.unlock() }
        let raw = status ?? 0
        let exited = (raw & 0x7f) == 0
        return ChildResult(exitCode: exited ? (raw >> 8) & 0xff : nil,
                           signal: exited ? nil : raw & 0x7f,
                           timedOut: killedOnTimeout,
                           stdoutBytes: stdoutData,
                           stderrBytes: stderrData)
    }

    /// Reaps the child once; returns its raw status, or nil while it runs.
    private func reap(blocking: Bool) -> Int32? {
        state.lock()
        defer { state.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        while true {
            let r = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            if r == pid { status = raw; state.broadcast(); return raw }
            if r == 0 { return nil }
            if errno == EINTR { continue }
            status = raw   // ECHILD: already gone
            return raw
        }
    }

    private func waitForPump(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        state.lock()
        defer { state.unlock() }
        while !pumpDone, state.wait(until: deadline) {}
    }

    /// Feeds stdin and drains stdout/stderr until both reach EOF (or the child is gone and the
    /// pipes stay quiet, e.g. a grandchild holds them open).
    private func pump(stdin: [UInt8], inputFD: Int32, outputFD: Int32, errorFD: Int32) {
        var inputFD: Int32 = inputFD
        var offset = 0
        _ = fcntl(inputFD, F_SETFL, fcntl(inputFD, F_GETFL) | O_NONBLOCK)
        if stdin.isEmpty { close(inputFD); inputFD = -1 }
        var open: [Int32] = [outputFD, errorFD]
        var buffer = [UInt8](repeating: 0, count: 65536)
        var quietAfterExit = 0
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if inputFD >= 0 { fds.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0)) }
            let n = poll(&fds, nfds_t(fds.count), 100)
            if n < 0 && errno != EINTR { break }
            if n == 0 {
                state.lock(); let exited = status != nil; state.unlock()
                if exited { quietAfterExit += 1; if quietAfterExit > 20 { break } }
                continue
            }
            for p in fds where p.revents != 0 {
                if p.fd == inputFD {
                    let written = stdin[offset...].withUnsafeBytes { write(inputFD, $0.baseAddress, $0.count) }
                    if written > 0 { offset += written }
                    if written < 0 && errno != EAGAIN && errno != EINTR || offset >= stdin.count {
                        close(inputFD)
                        inputFD = -1
                    }
                    continue
                }
                let count = read(p.fd, &buffer, buffer.count)
                if count > 0 {
                    state.lock()
                    if p.fd == outputFD { stdoutData += buffer[0..<count] } else { stderrData += buffer[0..<count] }
                    state.broadcast()
                    state.unlock()
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(p.fd)
                    open.removeAll { $0 == p.fd }
                }
            }
        }
        if inputFD >= 0 { close(inputFD) }
        for fd in open { close(fd) }
        state.lock()
        pumpDone = true
        state.broadcast()
        state.unlock()
    }
}

/// Calls `body` with a NULL-terminated C string array.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return body(pointers)
}
