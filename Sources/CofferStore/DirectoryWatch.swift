import CofferCore
import Synchronization
import SystemKit

/// Tells whether files of the store directory changed since a reader last looked, so that a
/// read need not `stat` or list anything when nothing changed.
///
/// Built on inotify: the kernel queues an event before the write, rename or unlink that
/// causes it returns, so one non-blocking `read` of the queue answers exactly, for changes
/// made by this process and by any other on this machine. Where inotify cannot tell every
/// change (a network file system, changed from other machines too; FUSE; any file system not
/// known to be local), where it is unavailable (no instances left), and for good once the
/// directory itself is removed, renamed or replaced (its parent is watched for that), every
/// question is answered "changed", which is slower but still exact.
final class DirectoryWatch: Sendable {
    /// Where a reader's knowledge stands: the watch's version when it last looked.
    struct Mark: Sendable {
        fileprivate var version: UInt64 = 0
    }

    /// The pseudo-name under which any collection file appearing or disappearing is recorded.
    static let listing = "/"

    private struct State {
        /// Nil where inotify is unavailable, and once the directory is gone.
        var inotify: Inotify?
        var version: UInt64 = 1
        /// The version at which each file last changed.
        var changed: [String: UInt64] = [:]
        /// The version at which each file was last created, removed or renamed (rather than
        /// only written).
        var replaced: [String: UInt64] = [:]
        /// The version at which everything must be assumed changed (queue overflow).
        var everything: UInt64 = 0
        /// The watch on the parent, which reports the directory's own removal or replacement.
        var parentWatch: Int32 = -1
    }

    private let state: Mutex<State>
    private let interesting: @Sendable (String) -> Bool
    /// The watched directory's name in its parent.
    private let directoryName: String

    /// Watches `directory` for changes to files whose names `interesting` accepts; with no
    /// directory, or one on a file system (`fileSystem`, by default the directory's own) whose
    /// changes are not all made on this machine, reports every file as changed every time.
    init(directory: String?, fileSystem: FileSystemKind? = nil, interesting: @escaping @Sendable (String) -> Bool) {
        let kind = fileSystem ?? directory.flatMap { try? FileSystemKind.of($0) }
        var state = State(inotify: directory != nil && kind?.changesAreAllLocal == true ? try? Inotify() : nil)
        if let directory, let inotify = state.inotify {
            let entries: Inotify.Events = [.create, .delete, .movedFrom, .movedTo, .deleteSelf, .moveSelf]
            let (parent, name) = Self.split(directory)
            self.directoryName = name
            do {
                // The parent first: a directory replaced between the two calls is then reported.
                state.parentWatch = try inotify.watch(parent, for: entries)
                _ = try inotify.watch(directory, for: entries.union(.modify))
            } catch {
                inotify.close()
                state.inotify = nil
            }
        } else {
            self.directoryName = ""
        }
        self.state = Mutex(state)
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
        state.withLock { $0.inotify?.close() }
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
            guard s.inotify != nil else { return true }
            return s.everything > seen || (s.changed[name] ?? 0) > seen
        }
    }

    /// Whether anything in the directory changed after `mark` (always, where the watch cannot
    /// tell); moves `mark` to now.
    func changedAnything(since mark: inout Mark) -> Bool {
        state.withLock { s in
            drain(&s)
            let seen = mark.version
            mark.version = s.version
            return s.inotify == nil || s.version > seen
        }
    }

    /// Moves `mark` past the writes to `name` queued so far, which the caller made itself (a
    /// writer holding the file's exclusive lock, whose state holds what it wrote). A creation,
    /// removal or rename of `name` since `mark` is not passed over: no lock keeps others from
    /// those, so the next `changed` still reports them.
    func absorbOwnWrites(to name: String, since mark: inout Mark) {
        state.withLock { s in
            drain(&s)
            guard s.inotify != nil, s.everything <= mark.version, (s.replaced[name] ?? 0) <= mark.version else { return }
            mark.version = s.version
        }
    }

    /// Reads every queued event and records the files they name: one read when they fit in
    /// its buffer (as they do unless many files changed at once).
    private func drain(_ s: inout State) {
        repeat {
            guard let events = s.inotify?.readEvents(), !events.isEmpty else { return }
            s.version += 1
            for event in events {
                if event.events.contains(.queueOverflow) {
                    s.everything = s.version
                    continue
                }
                let selfEvent = !event.events.isDisjoint(with: [.deleteSelf, .moveSelf, .ignored])
                if selfEvent || (event.watch == s.parentWatch && event.name == directoryName) {
                    // The directory (or its parent) is gone, elsewhere or replaced: no event
                    // will tell about the path again, so from now on every answer is "changed".
                    s.inotify?.close()
                    s.inotify = nil
                    return
                }
                if event.watch == s.parentWatch { continue }
                guard interesting(event.name) else { continue }
                s.changed[event.name] = s.version
                if !event.events.isDisjoint(with: [.create, .delete, .movedFrom, .movedTo]) {
                    s.replaced[event.name] = s.version
                    s.changed[Self.listing] = s.version
                }
            }
        } while s.inotify?.mayHaveMore == true
    }
}
