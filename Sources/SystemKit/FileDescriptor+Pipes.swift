import CProcess
#if canImport(Glibc)
import Glibc
#endif

/// Pipes, terminals and what a process does with its standard descriptors.
extension FileDescriptor {
    /// A new pipe. Both ends are close-on-exec from the start, so that a child another thread
    /// spawns meanwhile does not inherit them (which would keep the pipe from reaching end of
    /// file).
    public static func pipe() throws(Errno) -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard cprocess_pipe_cloexec(&fds) == 0 else { throw Errno(errno, operation: "pipe2") }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }

    /// Makes reads and writes that would wait throw `Errno.wouldBlock` instead.
    public func setNonBlocking() throws(Errno) {
        let flags = try retryingInterrupted("fcntl") { fcntl(rawValue, F_GETFL) }
        _ = try retryingInterrupted("fcntl") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// A new descriptor for this open file (the lowest free number, close-on-exec); the
    /// caller owns it and closes it.
    public func duplicate() throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingInterrupted("fcntl F_DUPFD_CLOEXEC") { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) })
    }

    /// Whether the descriptor was opened for writing (write-only or read-write); false also
    /// for one that is not open.
    public var isOpenForWriting: Bool {
        let flags = fcntl(rawValue, F_GETFL)
        return flags >= 0 && (flags & O_ACCMODE == O_WRONLY || flags & O_ACCMODE == O_RDWR)
    }

    /// `dup2(2)`: makes `target` another descriptor for this open file (not close-on-exec).
    public func duplicate(as target: FileDescriptor) throws(Errno) {
        _ = try retryingInterrupted("dup2") { dup2(rawValue, target.rawValue) }
    }

    /// Whether the descriptor is a terminal.
    public var isTerminal: Bool { isatty(rawValue) == 1 }

    /// The path of the terminal the descriptor is (e.g. `/dev/pts/3`), or nil if it is none.
    public var terminalPath: String? {
        var name = [CChar](repeating: 0, count: 256)
        guard ttyname_r(rawValue, &name, name.count) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `write(_:)` that turns a closed pipe into `Errno.brokenPipe` instead of a SIGPIPE that
    /// kills the process, without touching the process-wide disposition: SIGPIPE is blocked in
    /// this thread for the call, and one the write raised is consumed before it is unblocked.
    public func writeWithoutSIGPIPE(_ bytes: ArraySlice<UInt8>) throws(Errno) -> Int {
        try Self.withoutSIGPIPE { () throws(Errno) in try write(bytes) }
    }

    /// `write(_:)` of a span that turns a closed pipe into `Errno.brokenPipe` instead of a
    /// SIGPIPE, as `writeWithoutSIGPIPE(_:)` of an array slice does.
    public func writeWithoutSIGPIPE(_ bytes: RawSpan) throws(Errno) -> Int {
        try Self.withoutSIGPIPE { () throws(Errno) in try write(bytes) }
    }

    /// Runs `write` with SIGPIPE blocked in this thread, consuming a SIGPIPE it raised.
    private static func withoutSIGPIPE(_ write: () throws(Errno) -> Int) throws(Errno) -> Int {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var old = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        var pendingBefore = sigset_t()
        sigpending(&pendingBefore)
        let alreadyPending = sigismember(&pendingBefore, SIGPIPE) == 1
        do {
            return try write()
        } catch {
            if error == .brokenPipe && !alreadyPending {
                var now = timespec(tv_sec: 0, tv_nsec: 0)
                _ = try? retryingInterrupted("sigtimedwait") { sigtimedwait(&pipeSignal, nil, &now) }
            }
            throw error
        }
    }
}
