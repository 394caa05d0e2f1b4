import SystemKit

/// Writing secure memory to a descriptor: the bytes go from secure memory to the kernel, never
/// through an ordinary array.
extension SecureBytes {
    /// Writes every byte to `descriptor`, as many `write(2)` calls as it takes. A closed pipe is
    /// `Errno.brokenPipe`, never a SIGPIPE. With `timeout`, each write waits at most that long
    /// for the descriptor to take bytes, so a reader that never reads cannot hold the writer
    /// forever: then `Errno.timedOut`, with what was written so far left written.
    public func writeAll(to descriptor: FileDescriptor, timeout: Duration? = nil) throws(Errno) {
        var offset = 0
        while offset < count {
            if let timeout { try Self.waitUntilWritable(descriptor, timeout: timeout) }
            let rest = UnsafeRawBufferPointer(start: storage + offset, count: count - offset)
            offset += try descriptor.writeWithoutSIGPIPE(rest.bytes)
        }
    }

    /// Returns once `descriptor` takes bytes, or reports an error or hang-up (the write then
    /// says which); `Errno.timedOut` after `timeout`.
    private static func waitUntilWritable(_ descriptor: FileDescriptor, timeout: Duration) throws(Errno) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { throw Errno(Errno.timedOut.code, operation: "waiting to write") }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            if try !descriptor.poll(for: .writable, timeoutMilliseconds: milliseconds).isEmpty { return }
        }
    }
}
