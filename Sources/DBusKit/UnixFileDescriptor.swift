import Synchronization
public import SystemKit

/// A file descriptor passed in a D-Bus message (type `h`), owned: it is closed exactly once,
/// by `close()` or when the last copy of this value goes, whichever comes first.
///
/// Both directions duplicate: a descriptor read from a message is a new one (libdbus
/// duplicates it out of the message), owned by the `UnixFileDescriptor` the reader makes; a
/// descriptor appended to a message is duplicated into it, so the sender still owns its own
/// and closes it when done. Copies of the value share one owner (equal when they do), so the
/// `DBusValue`s and arguments holding it never close it twice; thread-safe.
public struct UnixFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// Closes the descriptor when closed explicitly or released by the last copy.
    private final class Owner: Sendable {
        /// The descriptor while owned; nil once closed or given up.
        let descriptor: Mutex<FileDescriptor?>
        init(_ descriptor: FileDescriptor) { self.descriptor = Mutex(descriptor) }
        deinit { descriptor.withLock { $0?.close() } }
    }

    private let owner: Owner

    /// Takes ownership of `descriptor`: from now on only this value (and its copies) closes it.
    public init(adopting descriptor: FileDescriptor) {
        owner = Owner(descriptor)
    }

    /// Owns a new duplicate of `descriptor` (close-on-exec); the caller still owns the original.
    public init(duplicating descriptor: FileDescriptor) throws(Errno) {
        self.init(adopting: try descriptor.duplicate())
    }

    /// Whether the descriptor is still open here (neither closed nor released).
    public var isOpen: Bool { owner.descriptor.withLock { $0 != nil } }

    /// Runs `body` with the descriptor, which stays open until `body` returns (a `close()` from
    /// another thread waits meanwhile). Throws `DBusError.failed` when it was closed already.
    public func withDescriptor<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
        try owner.descriptor.withLock { descriptor in
            guard let descriptor else { throw DBusError.failed("the file descriptor was closed already") }
            return try body(descriptor)
        }
    }

    /// Closes the descriptor now, for every copy; later calls do nothing.
    public func close() {
        owner.descriptor.withLock { descriptor in
            descriptor?.close()
            descriptor = nil
        }
    }

    /// Gives up ownership: returns the descriptor for the caller to close (nil when closed or
    /// released already); no copy of this value closes it any more.
    public func release() -> FileDescriptor? {
        owner.descriptor.withLock { descriptor in
            defer { descriptor = nil }
            return descriptor
        }
    }

    public static func == (a: UnixFileDescriptor, b: UnixFileDescriptor) -> Bool { a.owner === b.owner }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(owner)) }

    /// `file descriptor 7`, or `a closed file descriptor`.
    public var description: String {
        owner.descriptor.withLock { $0.map { "file descriptor \($0.rawValue)" } ?? "a closed file descriptor" }
    }
}
