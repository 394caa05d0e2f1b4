#if canImport(Glibc)
import Glibc
#endif

/// An inotify instance: changes to watched files and directories, queued by the kernel before
/// the call that causes them returns.
public struct Inotify {
    /// Kinds of event (`IN_*`), to ask for and as reported.
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let modify = Events(rawValue: UInt32(IN_MODIFY))
        public static let create = Events(rawValue: UInt32(IN_CREATE))
        public static let delete = Events(rawValue: UInt32(IN_DELETE))
        public static let movedFrom = Events(rawValue: UInt32(IN_MOVED_FROM))
        public static let movedTo = Events(rawValue: UInt32(IN_MOVED_TO))
        /// The watched file or directory itself was removed.
        public static let deleteSelf = Events(rawValue: UInt32(IN_DELETE_SELF))
        /// The watched file or directory itself was moved.
        public static let moveSelf = Events(rawValue: UInt32(IN_MOVE_SELF))
        /// The watch is gone (reported only).
        public static let ignored = Events(rawValue: UInt32(IN_IGNORED))
        /// Events were lost: the queue was full (reported only).
        public static let queueOverflow = Events(rawValue: UInt32(IN_Q_OVERFLOW))
    }

    /// One queued event.
    public struct Event: Sendable {
        /// The watch it is for (what `watch` returned).
        public let watch: Int32
        public let events: Events
        /// The name of the entry in a watched directory it is about; empty for the watched
        /// file or directory itself.
        public let name: String
    }

    private let descriptor: FileDescriptor
    private var buffer = [UInt8](repeating: 0, count: 4096)
    /// The size of the largest event: its header and a name of NAME_MAX bytes and a NUL.
    private static let largestEvent = 16 + Int(NAME_MAX) + 1

    /// Whether the last `readEvents` filled its buffer so far that more events may be queued
    /// behind them; false when it left room for another, so that it returned everything
    /// queued when it read (and no second read is needed to drain the queue).
    public private(set) var mayHaveMore = false

    /// A new instance, non-blocking and close-on-exec.
    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try retryingInterrupted("inotify_init1") {
            inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        })
    }

    /// Watches `path` for `events`; returns the watch the events will name.
    public func watch(_ path: String, for events: Events) throws(Errno) -> Int32 {
        try retryingInterrupted("inotify_add_watch \(path)") { inotify_add_watch(descriptor.rawValue, path, events.rawValue) }
    }

    /// The events one read of the queue returns; empty when none are queued.
    public mutating func readEvents() -> [Event] {
        let count = (try? retryingInterrupted("read") {
            Glibc.read(descriptor.rawValue, &buffer, buffer.count)
        }) ?? 0
        mayHaveMore = count > buffer.count - Self.largestEvent
        var events: [Event] = []
        var offset = 0
        // struct inotify_event: wd, mask, cookie, len (host byte order), then len bytes of name.
        while offset + 16 <= count {
            let length = Int(field(offset + 12))
            let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)]
            events.append(Event(watch: Int32(bitPattern: field(offset)), events: Events(rawValue: field(offset + 4)),
                                name: String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
            offset += 16 + length
        }
        return events
    }

    /// The 32-bit field at `offset` of the buffer, in host byte order.
    private func field(_ offset: Int) -> UInt32 {
        let littleEndian = (0..<4).reduce(UInt32(0)) { $0 | UInt32(buffer[offset + $1]) << (8 * $1) }
        return UInt32(littleEndian: littleEndian)
    }

    /// Closes the instance; its watches go with it.
    public func close() { descriptor.close() }
}
