#if canImport(Glibc)
import Glibc
#endif

extension Subprocess {
    /// What a finished (or stopped) program printed and how it ended.
    public struct Output: Sendable {
        /// How it ended; nil when it outlived the timeout and was killed.
        public let termination: Termination?
        /// Its standard output (at most `limit` bytes).
        public let standardOutput: [UInt8]
    }

    /// Runs `path` with `arguments` and `environment`, no standard input and standard error
    /// discarded, and collects its standard output. A program still running after `timeout`
    /// is killed (SIGKILL), so this never waits longer than that; output beyond `limit`
    /// bytes is dropped.
    public static func output(of path: String, arguments: [String] = [], environment: [String: String],
                              timeout: Duration, limit: Int = 1 << 20) throws(Errno) -> Output {
        let nowhere = try FileDescriptor.open("/dev/null", .readWrite)
        defer { nowhere.close() }
        let pipe = try FileDescriptor.pipe()
        let child: Subprocess
        do {
            child = try Subprocess(path, arguments: arguments, environment: environment, standardInput: nowhere,
                                   standardOutput: pipe.writeEnd, standardError: nowhere, newSession: true)
        } catch {
            pipe.readEnd.close()
            pipe.writeEnd.close()
            throw error
        }
        pipe.writeEnd.close()
        defer { pipe.readEnd.close() }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var collected: [UInt8] = []
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let events = try pipe.readEnd.poll(for: .readable, timeoutMilliseconds: milliseconds)
            guard !events.isEmpty else { continue }
            let chunk = try pipe.readEnd.read(upTo: 65536)
            if chunk.isEmpty { break }   // end of file: it closed its output (it exited, mostly)
            collected += chunk.prefix(max(0, limit - collected.count))
        }
        let remaining = max(.zero, deadline - ContinuousClock.now)
        guard let ended = child.wait(timeout: remaining) else {
            child.send(signal: SIGKILL)
            child.wait()
            return Output(termination: nil, standardOutput: collected)
        }
        return Output(termination: ended, standardOutput: collected)
    }
}
