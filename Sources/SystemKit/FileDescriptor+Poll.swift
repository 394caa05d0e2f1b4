#if canImport(Glibc)
import Glibc
#endif

/// Events `poll(2)` waits for, and reports.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// POLLIN: there is data to read (or end of file).
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// POLLOUT: a write would not block.
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// POLLERR (reported only).
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    /// POLLHUP: the other end is closed (reported only).
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    /// POLLNVAL: the descriptor is not open (reported only).
    public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

extension FileDescriptor {
    /// Waits until one of `descriptors` is ready for its events (or reports an error or hang-up),
    /// at most `timeoutMilliseconds` (-1: no limit). Returns the events each one reports, all
    /// empty when the time ran out or a signal interrupted the wait (callers wait in a loop
    /// that looks at the clock anyway, so EINTR needs no retry with a shortened timeout).
    public static func poll(_ descriptors: [(FileDescriptor, PollEvents)],
                            timeoutMilliseconds: Int32) throws(Errno) -> [PollEvents] {
        var fds = descriptors.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
        let n = Glibc.poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        if n < 0 {
            let code = errno
            if code != EINTR { throw Errno(code, operation: "poll") }
        }
        return fds.map { PollEvents(rawValue: $0.revents) }
    }

    /// `poll(for:)` on this descriptor alone: the events it reports, empty on timeout.
    public func poll(for events: PollEvents, timeoutMilliseconds: Int32) throws(Errno) -> PollEvents {
        try Self.poll([(self, events)], timeoutMilliseconds: timeoutMilliseconds)[0]
    }
}
