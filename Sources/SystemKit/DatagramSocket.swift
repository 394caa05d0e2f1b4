import CProcess
#if canImport(Glibc)
import Glibc
#endif

/// A Unix datagram socket (`AF_UNIX`, `SOCK_DGRAM`, close-on-exec): connected to a path to
/// send (as to the system log at /dev/log), or bound to one to receive.
public struct DatagramSocket: Sendable {
    public let descriptor: FileDescriptor

    /// A socket that sends to the socket bound at `path`, never waiting: when the receiver's
    /// queue is full, `send` throws `Errno.wouldBlock`.
    public static func connected(to path: String) throws(Errno) -> DatagramSocket { try open(path, bound: false) }

    /// A socket bound at `path` (which must not exist), to receive on.
    public static func bound(at path: String) throws(Errno) -> DatagramSocket { try open(path, bound: true) }

    /// Sends `bytes` as one datagram (on a connected socket, one write(2) is one datagram).
    public func send(_ bytes: [UInt8]) throws(Errno) {
        _ = try descriptor.write(bytes[...])
    }

    /// The next datagram (up to `limit` bytes), or nil when none arrives within `milliseconds`.
    public func receive(limit: Int = 65536, waitingAtMost milliseconds: Int32) throws(Errno) -> [UInt8]? {
        guard !(try descriptor.poll(for: .readable, timeoutMilliseconds: milliseconds)).isEmpty else { return nil }
        return try descriptor.read(upTo: limit)
    }

    public func close() { descriptor.close() }

    private static func open(_ path: String, bound: Bool) throws(Errno) -> DatagramSocket {
        let raw = cprocess_unix_datagram_socket(path, bound ? 1 : 0)
        guard raw >= 0 else { throw Errno(errno, operation: "\(bound ? "bind" : "connect") \(path)") }
        return DatagramSocket(descriptor: FileDescriptor(rawValue: raw))
    }
}
