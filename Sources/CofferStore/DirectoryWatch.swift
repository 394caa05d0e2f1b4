import CofferCore
#if canImport(Glibc)
import Glibc
#endif

/// Tells whether files of the store directory changed since a reader last looked, so that a
/// read need not `stat` or list anything when nothing changed.
///
/// Built on inotify: the kernel queues an event before the write, rename or unlink that
/// causes it returns, so one non-blocking `read` of the queue answers exactly, for changes
/// made by this process and by any other. Where inotify is unavailable (no instances left,
/// a file system without it), and for good once the directory itself is removed, renamed or
/// replaced (its parent is watched for that), every question is answered "changed", which is
/// slower but still exact.
final class DirectoryWatch: @unchecked Sendable {
    /// Where a reader's knowledge stands: the watch's version when it last looked.
    struct Mark: Sendable {
        fileprivate var version: UInt64 = 0
    }

    /// The pseudo-name under which any collection file appearing or disappearing is recorded.
    static let listing = "/"

    private struct State {
        var descriptor: Int32
        var version: UInt64 = 1
        /// The version at which each file last changed.
        var changed: [String: UInt64] = [:]
        /// The version at which everything must be assumed changed (queue overflow).
        var everything: UInt64 = 0
        /// The watch on the parent, which reports the directory's own removal or replacement.
        var parentWatch: Int32 = -1
        var buffer = [UInt8](repeating: 0, count: 4096)
    }

    private let state: Locked<State>
    private let interesting: @Sendable (String) -> Bool
    /// The watched directory's name in its parent.
    private let directoryName: String

    /// Watches `directory` for changes to files whose names `interesting` accepts; with no
    /// directory, reports every file as changed every time.
    init(directory: String?, interesting: @escaping @Sendable (String) -> Bool) {
        var state = State(descriptor: directory == nil ? -1 : inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)))
        if let directory, state.descriptor >= 0 {
            let entries = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF
            let (parent, name) = Self.split(directory)
            // The parent first: a directory replaced between the two calls is then reported.
            state.parentWatch = inotify_add_watch(state.descriptor, parent, UInt32(entries))
            self.directoryName = name
            if state.parentWatch < 0 || inotify_add_watch(state.descriptor, directory, UInt32(entries | IN_MODIFY)) < 0 {
                close(state.descriptor)
                state.descriptor = -1
            }
        } else {
            self.directoryName = ""
        }
        self.state = Locked(state)
        self.interesting = interesting
    }

    /// A path's parent and last element (trailing slashes ignored).
    private static func split(_ path: String) -> (parent: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let parent = trimmed[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(trimmed[trimmed.index(after: slash)...]))
    }

    deinit {
        state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
    }

    /// A mark for a reader about to read the directory's current state.
    func mark() -> Mark {
        state.withLock { s in
            drain(&s)
            return Mark(version: s.version)
        }
    }

    /// Whether `name` (or, for `listing`, the set of collection files) changed after `mark`;
    /// moves `mark` to now.
    func changed(_ name: String, since mark: inout Mark) -> Bool {
        state.withLock { s in
            drain(&s)
            let seen = mark.version
            mark.version = s.version
            guard s.descriptor >= 0 else { return true }
            return s.everything > seen || (s.changed[name] ?? 0) > seen
        }
    }

    /// Reads every queued event and records the files they name.
    private func drain(_ s: inout State) {
        guard s.descriptor >= 0 else { return }
        while true {
            let count = read(s.descriptor, &s.buffer, s.buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            s.version += 1
            var offset = 0
            while offset + 16 <= count {
                let watch = Int32(bitPattern: Self.u32(s.buffer, offset))
                let mask = Self.u32(s.buffer, offset + 4)
                let length = Int(Self.u32(s.buffer, offset + 12))
                let nameBytes = s.buffer[(offset + 16)..<min(offset + 16 + length, count)]
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    s.everything = s.version
                    continue
                }
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                let selfEvent = mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0
                if selfEvent || (watch == s.parentWatch && name == directoryName) {
                    // The directory (or its parent) is gone, elsewhere or replaced: no event
                    // will tell about the path again, so from now on every answer is "changed".
                    close(s.descriptor)
                    s.descriptor = -1
                    return
                }
                if watch == s.parentWatch { continue }
                guard interesting(name) else { continue }
                s.changed[name] = s.version
                if mask & UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) != 0 {
                    s.changed[Self.listing] = s.version
                }
            }
        }
    }

    /// A field of `struct inotify_event`, which the kernel writes in host byte order.
    private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(littleEndian: UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
                                | UInt32(bytes[at + 3]) << 24)
    }
}
