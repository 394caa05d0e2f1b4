#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says a running process is, read from `/proc/PID`: the program file it
/// runs and the sandbox it runs in. Nothing here comes from what the process says about itself
/// (its arguments, its command name, its environment).
///
/// `read(processID:)` reads the start time before and after everything else and fails with
/// `ProcessIdentityError.gone` when the two differ or the process vanished meanwhile, so the
/// parts always describe one process, not an exited one and the next process given its PID.
public struct ProcessIdentity: Equatable, Sendable {
    public let processID: Int32
    /// When the process started, in clock ticks since boot: with `processID`, names it for all time.
    public let startTime: UInt64
    /// The program file the process runs.
    public let executable: RunningExecutable
    /// The app id in the sandbox's `/.flatpak-info`; nil outside a Flatpak app's sandbox (or in
    /// a runtime-only one, or when the file there is not one Flatpak writes).
    public let flatpakApplicationID: String?
    /// The snap the process belongs to: from its AppArmor label where AppArmor labels
    /// processes, from its systemd unit (cgroup) only where no label says anything.
    public let snapName: String?
    /// Whether the process sees the mount namespace this one sees. Paths of a process that does
    /// not (a container, a sandbox) name files in its own namespace, not in this one's.
    public let sharesMountNamespace: Bool

    /// Reads the identity of process `processID`.
    public static func read(processID: Int32) throws(ProcessIdentityError) -> ProcessIdentity {
        try read(processID: processID, procRoot: "/proc")
    }

    /// `read(processID:)` on a /proc tree at `procRoot` (tests give a fake one).
    static func read(processID pid: Int32, procRoot: String) throws(ProcessIdentityError) -> ProcessIdentity {
        guard pid > 0 else { throw .gone(processID: pid) }
        let reader = ProcessFiles(directory: "\(procRoot)/\(pid)", selfDirectory: "\(procRoot)/self", processID: pid)
        let before = try reader.startTime()
        let parts = Result { () throws(ProcessIdentityError) in
            (try reader.executable(), try reader.flatpakApplicationID(), try reader.snapName(), try reader.sharesMountNamespace())
        }
        // Whatever failed above, a process that is gone now is reported as gone.
        guard try reader.startTime() == before else { throw .gone(processID: pid) }
        let (executable, flatpak, snap, sharesNamespace) = try parts.get()
        return ProcessIdentity(processID: pid, startTime: before, executable: executable, flatpakApplicationID: flatpak,
                               snapName: snap, sharesMountNamespace: sharesNamespace)
    }
}

extension ProcessStat {
    /// What `/proc/PID/stat` says of process `processID`, which runs (else `.gone`). Readable
    /// where `ProcessIdentity.read` is not: for a process that made itself non-dumpable.
    public static func read(processID: Int32) throws(ProcessIdentityError) -> ProcessStat {
        guard processID > 0 else { throw .gone(processID: processID) }
        return try ProcessFiles(directory: "/proc/\(processID)", selfDirectory: "/proc/self", processID: processID).stat()
    }
}

/// The program file a process runs, found through `/proc/PID/exe`.
public struct RunningExecutable: Equatable, Sendable {
    /// Where it was when the process started it, as the kernel gives it seen from this process's
    /// root (without the ` (deleted)` the kernel adds once the file is unlinked).
    public let path: String
    /// The file itself (`/proc/PID/exe` leads to it even once it is deleted): which file it is,
    /// its size and times.
    public let file: FileStatus
    /// Whether `path` no longer names the running file: it was deleted, or another file took
    /// its place (an upgrade). The running program is then the one that was at `path`, never the
    /// file there now.
    public let isReplaced: Bool

    /// Whether `status` describes the same file as `file` (device and inode).
    public func isSameFile(as status: FileStatus) -> Bool {
        status.node == file.node
    }
}

/// Why a process's identity could not be read.
public enum ProcessIdentityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The process has exited (or never ran), or its PID names another process by now.
    case gone(processID: Int32)
    /// The process runs, but a file that names it cannot be read: `EACCES` for another user's
    /// process or one that made itself non-dumpable (its `/proc/PID/exe` and `root` are root's).
    case unreadable(processID: Int32, Errno)
    /// A file of `/proc/PID` does not have the kernel's shape.
    case malformed(processID: Int32, file: String)

    public var description: String {
        switch self {
        case .gone(let pid): "process \(pid) is gone"
        case .unreadable(let pid, let error): "cannot read what process \(pid) is: \(error)"
        case .malformed(let pid, let file): "cannot read what process \(pid) is: /proc/\(pid)/\(file) is malformed"
        }
    }
}

/// The files of one `/proc/PID` directory, read into the parts of a `ProcessIdentity`.
private struct ProcessFiles {
    let directory: String
    let selfDirectory: String
    let processID: Int32

    /// The largest `attr/current` or `cgroup` file read.
    static let sizeLimit = 64 * 1024
    static let deletedMark = " (deleted)"

    func startTime() throws(ProcessIdentityError) -> UInt64 {
        try stat().startTime
    }

    /// `stat`, of a process that runs (else `.gone`).
    func stat() throws(ProcessIdentityError) -> ProcessStat {
        let bytes: [UInt8]?
        do {
            bytes = try contents("stat")
        } catch Errno.noSuchFile {
            throw .gone(processID: processID)
        } catch where error.code == ESRCH {
            throw .gone(processID: processID)
        } catch {
            throw .unreadable(processID: processID, error)
        }
        guard let bytes, let stat = ProcessStat(parsing: String(decoding: bytes, as: UTF8.self)) else {
            throw .malformed(processID: processID, file: "stat")
        }
        if stat.hasExited { throw .gone(processID: processID) }
        return stat
    }

    func executable() throws(ProcessIdentityError) -> RunningExecutable {
        let link = "\(directory)/exe"
        let target: String, file: FileStatus
        do {
            target = try FileSystem.readSymbolicLink(link)
            file = try FileStatus.of(link)
        } catch {
            throw .unreadable(processID: processID, error)
        }
        guard target.hasPrefix("/") else { throw .malformed(processID: processID, file: "exe") }
        let runningFile = { (path: String) -> Bool in
            guard let status = try? FileStatus.of(path) else { return false }
            return status.node == file.node
        }
        // A file may really be called "x (deleted)"; only when that name is not the running
        // file is the mark the kernel's.
        if target.hasSuffix(Self.deletedMark), !runningFile(target) {
            return RunningExecutable(path: String(target.dropLast(Self.deletedMark.count)), file: file, isReplaced: true)
        }
        return RunningExecutable(path: target, file: file, isReplaced: !runningFile(target))
    }

    func flatpakApplicationID() throws(ProcessIdentityError) -> String? {
        let path = "\(directory)/root/.flatpak-info"
        let info: FileDescriptor
        do {
            info = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking])
        } catch Errno.noSuchFile {
            return nil
        } catch where error.code == ELOOP {
            return nil   // a symbolic link: never Flatpak's
        } catch {
            throw .unreadable(processID: processID, error)
        }
        defer { info.close() }
        do {
            guard try info.status().kind == .regular,
                  let bytes = try info.readAll(atMost: FlatpakInfo.sizeLimit) else { return nil }
            return FlatpakInfo.applicationID(in: bytes)
        } catch {
            throw .unreadable(processID: processID, error)
        }
    }

    func snapName() throws(ProcessIdentityError) -> String? {
        // The AppArmor-only file first (kernels with several security modules), then the
        // first module's; neither exists or reads without AppArmor (EINVAL, ENOENT).
        let labelText = ["attr/apparmor/current", "attr/current"].lazy
            .compactMap { try? self.contents($0) }.first
        switch labelText.map({ SnapLabel.securityLabel(String(decoding: $0, as: UTF8.self)) }) ?? .unknown {
        case .snap(let name): return name
        case .notSnap: return nil
        case .unknown: break
        }
        let cgroups: [UInt8]?
        do {
            cgroups = try contents("cgroup")
        } catch {
            throw .unreadable(processID: processID, error)
        }
        guard let cgroups else { throw .malformed(processID: processID, file: "cgroup") }
        return SnapLabel.snapName(fromCgroups: String(decoding: cgroups, as: UTF8.self))
    }

    func sharesMountNamespace() throws(ProcessIdentityError) -> Bool {
        do {
            return try FileSystem.readSymbolicLink("\(directory)/ns/mnt") == FileSystem.readSymbolicLink("\(selfDirectory)/ns/mnt")
        } catch {
            throw .unreadable(processID: processID, error)
        }
    }

    /// The file `name` of the directory, or nil when it holds more than `sizeLimit` bytes.
    private func contents(_ name: String) throws(Errno) -> [UInt8]? {
        let file = try FileDescriptor.open("\(directory)/\(name)", .readOnly)
        defer { file.close() }
        return try file.readAll(atMost: Self.sizeLimit)
    }
}
