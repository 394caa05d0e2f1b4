import Foundation
import Synchronization
import SystemKit

/// Errors starting or talking to a child process.
public enum ChildProcessError: Error, CustomStringConvertible {
    case notFound(String)
    case timedOut(String)
    case failed(String)

    public var description: String {
        switch self {
        case .notFound(let what): return "not found: \(what)"
        case .timedOut(let what): return "timed out: \(what)"
        case .failed(let what): return "failed: \(what)"
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

    /// The status as a shell reports it: the exit code, or 128 plus the signal.
    public var status: Int32 { exitCode ?? 128 + (signal ?? 0) }

    public var description: String {
        let how = exitCode.map { "exit \($0)" } ?? signal.map { "signal \($0)" } ?? "?"
        return "\(how)\(timedOut ? " (timed out)" : ""); stdout: \(stdout.debugDescription); stderr: \(stderr.debugDescription)"
    }
}

/// A child process (a SystemKit `Subprocess`) with its stdin fed from memory and its stdout
/// and stderr captured.
///
/// The child starts with an empty signal mask and default dispositions (Swift Testing threads
/// block most signals and a plain spawn would pass that mask on, making the child ignore
/// SIGTERM). It inherits no descriptors other than its three standard streams. Waiting always
/// has a hard timeout after which the child is SIGKILLed, and `deinit` kills a child still running.
public final class ChildProcess: Sendable {
    public let executable: String
    private let process: Subprocess

    /// What the I/O thread captured, and how the waiting went.
    private struct Captured {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var pumpDone = false
        var killedOnTimeout = false
    }
    private let captured = Mutex(Captured())

    /// Starts `executable` (an absolute path, or a name looked up in `PATH`).
    /// - environment: the full environment (nil: inherit this process's environment).
    /// - stdin: bytes written to the child's stdin, which is then closed (nil: empty stdin).
    /// - newSession: start it in a session of its own, without a controlling terminal.
    public init(_ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
                stdin: [UInt8]? = nil, workingDirectory: String? = nil, newSession: Bool = false) throws {
        guard let path = Executables.resolve(executable) else { throw ChildProcessError.notFound(executable) }
        self.executable = path
        _ = ChildProcess.ignoreSIGPIPE

        let input = try FileDescriptor.pipe()
        let output = try FileDescriptor.pipe()
        let errors = try FileDescriptor.pipe()
        defer {
            input.readEnd.close()
            output.writeEnd.close()
            errors.writeEnd.close()
        }
        do {
            process = try Subprocess(path, arguments: arguments,
                                     environment: environment ?? ProcessInfo.processInfo.environment,
                                     standardInput: input.readEnd, standardOutput: output.writeEnd,
                                     standardError: errors.writeEnd, workingDirectory: workingDirectory,
                                     newSession: newSession)
        } catch {
            input.writeEnd.close()
            output.readEnd.close()
            errors.readEnd.close()
            throw error
        }

        let pump = Thread { [self] in
            self.pump(stdin: stdin ?? [], input: input.writeEnd, output: output.readEnd, errors: errors.readEnd)
        }
        pump.name = "ChildProcess \(pid) I/O"
        pump.start()
    }

    /// Writing to a child that already exited must give EPIPE, not kill the test process.
    private static let ignoreSIGPIPE: Void = ProcessControl.ignore(signal: SIGPIPE)

    deinit {
        if process.exitStatus() == nil {
            process.send(signal: SIGKILL)
            process.wait()
        }
    }

    public var pid: pid_t { process.pid }

    // MARK: Output

    /// Everything the child wrote to stdout so far.
    public var stdout: String { String(decoding: captured.withLock { $0.stdout }, as: UTF8.self) }
    /// Everything the child wrote to stderr so far.
    public var stderr: String { String(decoding: captured.withLock { $0.stderr }, as: UTF8.self) }

    /// Waits until the captured stdout satisfies `predicate` (true), or the timeout passes or the
    /// output ends without it (false).
    public func waitForStdout(timeout: TimeInterval, until predicate: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var checked = -1
        while true {
            let (output, done) = captured.withLock { ($0.stdout, $0.pumpDone) }
            if output.count != checked {
                if predicate(String(decoding: output, as: UTF8.self)) { return true }
                checked = output.count
            }
            if done || Date() >= deadline { return false }
            usleep(5_000)
        }
    }

    // MARK: Waiting and stopping

    /// Whether the child is still running.
    public var isRunning: Bool { process.exitStatus() == nil }

    /// Waits up to `timeout` seconds for the child to exit; then SIGKILLs it. Returns how it
    /// ended plus all captured output.
    @discardableResult
    public func wait(timeout: TimeInterval) -> ChildResult {
        if process.wait(timeout: .seconds(timeout)) == nil {
            captured.withLock { $0.killedOnTimeout = true }
            process.send(signal: SIGKILL)
            process.wait()
        }
        waitForPump(timeout: 2)
        return result()
    }

    /// Sends SIGTERM, waits up to `grace` seconds, then SIGKILLs. Returns how it ended.
    @discardableResult
    public func terminate(grace: TimeInterval = 3) -> ChildResult {
        process.send(signal: SIGTERM)
        if process.wait(timeout: .seconds(grace)) == nil {
            process.send(signal: SIGKILL)
            process.wait()
        }
        waitForPump(timeout: 2)
        return result()
    }

    /// Sends `signal` to the child.
    public func send(signal: Int32) { process.send(signal: signal) }

    private func result() -> ChildResult {
        let (exitCode, signal): (Int32?, Int32?) = switch process.exitStatus() {
        case .exited(let code): (code, nil)
        case .signalled(let number): (nil, number)
        case .unknown, nil: (nil, nil)
        }
        return captured.withLock {
            ChildResult(exitCode: exitCode, signal: signal, timedOut: $0.killedOnTimeout,
                        stdoutBytes: $0.stdout, stderrBytes: $0.stderr)
        }
    }

    private func waitForPump(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        while !captured.withLock({ $0.pumpDone }) && Date() < deadline { usleep(2_000) }
    }

    /// Feeds stdin and drains stdout/stderr until both reach EOF (or the child is gone and the
    /// pipes stay quiet, e.g. a grandchild holds them open).
    private func pump(stdin: [UInt8], input: FileDescriptor, output: FileDescriptor, errors: FileDescriptor) {
        var input: FileDescriptor? = input
        if stdin.isEmpty || (try? input?.setNonBlocking()) == nil {
            input?.close()
            input = nil
        }
        var offset = 0
        var open = [output, errors]
        var quietAfterExit = 0
        while !open.isEmpty {
            var watched = open.map { ($0, PollEvents.readable) }
            if let input { watched.append((input, .writable)) }
            guard let ready = try? FileDescriptor.poll(watched, timeoutMilliseconds: 100) else { break }
            if ready.allSatisfy(\.isEmpty) {
                if process.exitStatus() != nil { quietAfterExit += 1; if quietAfterExit > 20 { break } }
                continue
            }
            for (index, events) in ready.enumerated() where !events.isEmpty {
                let descriptor = watched[index].0
                if descriptor == input {
                    let finished: Bool
                    do {
                        offset += try descriptor.write(stdin[offset...])
                        finished = offset >= stdin.count
                    } catch {
                        finished = error != .wouldBlock   // the child closed its stdin
                    }
                    if finished {
                        descriptor.close()
                        input = nil
                    }
                    continue
                }
                let chunk = (try? descriptor.read(upTo: 65536)) ?? []
                if chunk.isEmpty {
                    descriptor.close()
                    open.removeAll { $0 == descriptor }
                } else {
                    captured.withLock {
                        if descriptor == output { $0.stdout += chunk } else { $0.stderr += chunk }
                    }
                }
            }
        }
        input?.close()
        for descriptor in open { descriptor.close() }
        captured.withLock { $0.pumpDone = true }
    }
}
