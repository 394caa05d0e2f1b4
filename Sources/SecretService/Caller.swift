import CofferCore
import Synchronization
import SystemKit

/// A client of the service as `CallerIdentifier` identified it: the application behind one bus
/// connection, from the bus (which process connected) and the kernel (what that process is),
/// never from anything the client said. A process whose executable the kernel does not show
/// (it made itself non-dumpable) is an unverified process (`Application.unverified`): named by
/// its command name, served only as far as the collection's policy serves anyone.
public final class Caller: Sendable, CustomStringConvertible {
    /// The connection's unique name on the bus (`:1.42`).
    public let uniqueName: String
    /// The application: the Flatpak app, else the snap, else the program file by its path (see
    /// `application(of:)`); an unverified process when none of that can be read.
    public let application: Application
    /// The process that opened the connection.
    public let processID: Int32
    /// Its Unix user id, as the bus gave it.
    public let unixUserID: UInt32?
    /// All the kernel said of the process when it was identified; nil for an unverified process.
    public let process: ProcessIdentity?
    /// Why the process could not be verified (nil when it was): for the log and error messages.
    public let unverifiedBecause: String?

    private let digests: ExecutableDigests
    private let digest = Mutex<[UInt8]?>(nil)

    init(uniqueName: String, application: Application, unixUserID: UInt32?, process: ProcessIdentity,
         digests: ExecutableDigests) {
        self.uniqueName = uniqueName
        self.application = application
        self.processID = process.processID
        self.unixUserID = unixUserID
        self.process = process
        self.unverifiedBecause = nil
        self.digests = digests
    }

    /// An unverified process: `stat` is what anyone can read of it, `reason` why the rest
    /// could not be read.
    init(uniqueName: String, unverified stat: ProcessStat, processID: Int32, unixUserID: UInt32?, reason: String,
         digests: ExecutableDigests) {
        self.uniqueName = uniqueName
        self.application = .unverified(commandName: stat.commandName)
        self.processID = processID
        self.unixUserID = unixUserID
        self.process = nil
        self.unverifiedBecause = reason
        self.digests = digests
    }

    /// What marks an executable's path when the path no longer names the file that runs (it
    /// was deleted, or replaced as by an upgrade, or the process sees another file there than
    /// this one does): `exe:/usr/bin/program (replaced)`, an application of its own.
    public static let replacedMark = " (replaced)"

    /// The application `process` is: its Flatpak app id, else its snap, else the path of its
    /// executable, with `replacedMark` when that path no longer names the running file. Nil
    /// when the path cannot name an application (it holds control characters, or is too long).
    public static func application(of process: ProcessIdentity) -> Application? {
        if let id = process.flatpakApplicationID { return Application(kind: .flatpak, name: id) }
        if let snap = process.snapName { return Application(kind: .snap, name: snap) }
        let executable = process.executable
        return Application(kind: .executable, name: executable.path + (executable.isReplaced ? replacedMark : ""))
    }

    /// The SHA-256 of the program file the process runs, read through `/proc/PID/exe` (the
    /// running file, never whatever is at its path now), and remembered once read; nil for an
    /// unverified process, and when it cannot be read any more (the process exited, or runs another program by now). Reads the
    /// file on first use, blocking: on the loop thread, first let
    /// `CallerIdentifier.executableDigest(of:then:)` read it on another thread.
    public var executableDigest: [UInt8]? {
        if let known = knownExecutableDigest { return known }
        guard let process else { return nil }
        // Hashed outside the lock: the loop thread reads `knownExecutableDigest` meanwhile and
        // must not wait for a large program file to be read.
        let computed = digests.digest(of: process)
        return digest.withLock { known in
            if known == nil { known = computed }
            return known
        }
    }

    /// The digest if it was read already; nil without reading anything otherwise.
    var knownExecutableDigest: [UInt8]? { digest.withLock { $0 } }

    /// `/usr/bin/secret-tool (PID 4242, :1.42)`.
    public var description: String { "\(application) (PID \(processID), \(uniqueName))" }
}
