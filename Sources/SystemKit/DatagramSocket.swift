#if canImport(Glibc)
import Glibc
#endif

/// A Unix datagram socket (`AF_UNIX`, `SOCK_DGRAM`, close-on-exec): connected to a path to
/// send (as to the system log at /dev/log), or bound to one to receive.
public struct DatagramSocket: Sendable {
    public let descriptor: FileDescriptor

    /// A socket that sends to the socket bound at `path`.
    public static func connected(to path: String) throws(Errno) -> DatagramSocket {
        try open(at: path, "connect") { Glibc.connect($0, $1, $2) }
    }

    /// A socket bound at `path` (which must not exist), to receive on.
    public static func bound(at path: String) throws(Errno) -> DatagramSocket {
        try open(at: path, "bind") { Glibc.bind($0, $1, $2) }
    }

    /// Sends `bytes` as one datagram. Unless `waiting`, a receiver whose queue is full makes
    /// it throw `Errno.wouldBlock` at once.
    public func send(_ bytes: [UInt8], waiting: Bool = true) throws(Errno) {
        let flags = Int32(MSG_NOSIGNAL) | (waiting ? 0 : Int32(MSG_DONTWAIT))
        _ = try retryingInterrupted("send") {
            bytes.withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, flags) }
        }
    }

    /// The next datagram (up to `limit` bytes), or nil when none arrives within `milliseconds`.
    public func receive(limit: Int = 65536, waitingAtMost milliseconds: Int32) throws(Errno) -> [UInt8]? {
        guard !(try descriptor.poll(for: .readable, timeoutMilliseconds: milliseconds)).isEmpty else { return nil }
        return try descriptor.read(upTo: limit)
    }

    public func close() { descriptor.close() }

    /// A new socket on which `operation` (connect or bind) was done with `path`.
    private static func open(at path: String, _ operation: String,
                             _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) throws(Errno) -> DatagramSocket {
        let raw = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw Errno(errno, operation: "socket") }
        let socket = DatagramSocket(descriptor: FileDescriptor(rawValue: raw))
        do {
            try withAddress(path, operation) { call(raw, $0, $1) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Calls `body` with a `sockaddr_un` for `path`.
    private static func withAddress(_ path: String, _ operation: String,
                                    _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) throws(Errno) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { throw Errno(ENAMETOOLONG, operation: "\(operation) \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw Errno(errno, operation: "\(operation) \(path)") }
    }
}
