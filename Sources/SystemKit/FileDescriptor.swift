#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor and the calls made on it, in the style of swift-system's
/// `FileDescriptor`: every call is retried on EINTR and throws `Errno` naming the operation.
///
/// A plain value: copies name the same descriptor, and nothing closes it but `close()`.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    public static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    public static let standardError = FileDescriptor(rawValue: STDERR_FILENO)

    /// Closes the descriptor. Not retried on EINTR: on Linux the descriptor is released even
    /// then, and a retry could close one another thread just opened.
    public func close() { _ = Glibc.close(rawValue) }

    // MARK: Reading

    /// One `read(2)` into the start of `buffer`: how many bytes arrived, 0 at end of file. A
    /// non-blocking descriptor with nothing to read throws `Errno.wouldBlock`. For callers whose
    /// bytes must not pass through an array (secure memory).
    public func read(into buffer: inout MutableRawSpan) throws(Errno) -> Int {
        try retryingInterrupted("read") { buffer.withUnsafeMutableBytes { Glibc.read(rawValue, $0.baseAddress, $0.count) } }
    }

    /// The bytes of one `read(2)` of at most `count` bytes: empty only at end of file.
    public func read(upTo count: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try retryingInterrupted("read") { Glibc.read(rawValue, &bytes, count) }
        bytes.removeLast(count - n)
        return bytes
    }

    /// Everything up to end of file.
    public func readAll() throws(Errno) -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read(upTo: 65536)
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// Everything up to end of file, or nil as soon as more than `limit` bytes arrive (for
    /// files whose size cannot be trusted or known in advance, such as those in /proc).
    public func readAll(atMost limit: Int) throws(Errno) -> [UInt8]? {
        var all: [UInt8] = []
        while true {
            let chunk = try read(upTo: min(65536, limit - all.count + 1))
            if chunk.isEmpty { return all }
            all += chunk
            if all.count > limit { return nil }
        }
    }

    // MARK: Writing

    /// One `write(2)` of `bytes`: how many were written (perhaps fewer). A non-blocking
    /// descriptor that takes nothing now throws `Errno.wouldBlock`.
    public func write(_ bytes: ArraySlice<UInt8>) throws(Errno) -> Int {
        try write(bytes.span.bytes)
    }

    /// One `write(2)` of `bytes`: how many were written (perhaps fewer). For callers whose
    /// bytes must not be copied into an array first (secure memory).
    public func write(_ bytes: RawSpan) throws(Errno) -> Int {
        try retryingInterrupted("write") { bytes.withUnsafeBytes { Glibc.write(rawValue, $0.baseAddress, $0.count) } }
    }

    /// Writes all of `bytes`, as many `write(2)` calls as it takes.
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try write(bytes[offset...])
        }
    }
}
