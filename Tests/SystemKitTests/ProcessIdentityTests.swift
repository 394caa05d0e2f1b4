import CofferTestSupport
import Foundation
@testable import SystemKit
import Testing

/// `ProcessIdentity.read` on real child processes, and on fake /proc trees for the sandboxes
/// this machine does not have.
@Suite(.timeLimit(.minutes(5))) struct ProcessIdentityTests {
    /// Starts `path` with `arguments`, its output discarded; the caller kills it.
    func start(_ path: String, _ arguments: [String] = []) throws -> Subprocess {
        let null = try FileDescriptor.open("/dev/null", .readWrite)
        defer { null.close() }
        return try Subprocess(path, arguments: arguments, environment: ["PATH": "/usr/bin:/bin"],
                              standardInput: null, standardOutput: null, standardError: null)
    }

    func stop(_ process: Subprocess) {
        process.send(signal: SIGKILL)
        _ = process.wait(timeout: .seconds(5))
    }

    /// Where the kernel says `path` is: every symbolic link resolved.
    func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    @Test func aChildIsTheExecutableTheKernelRuns() throws {
        let sleep = try start("/bin/sleep", ["30"])
        defer { stop(sleep) }
        let identity = try ProcessIdentity.read(processID: sleep.pid)
        #expect(identity.processID == sleep.pid)
        #expect(identity.executable.path == resolved("/bin/sleep"))
        #expect(identity.executable.path.hasPrefix("/") && !identity.executable.path.hasPrefix("/bin/"))   // /bin is a link here
        #expect(!identity.executable.isReplaced)
        #expect(identity.executable.isSameFile(as: try FileStatus.of("/bin/sleep")))
        #expect(identity.flatpakApplicationID == nil)
        #expect(identity.snapName == nil)
        #expect(identity.sharesMountNamespace)

        // The start time is the kernel's field 22, and does not change while the process runs.
        let stat = try FileSystem.contents(of: "/proc/\(sleep.pid)/stat")
        #expect(identity.startTime == ProcessStat(parsing: String(decoding: stat, as: UTF8.self))?.startTime)
        #expect(identity.startTime > 0)
        #expect(try ProcessIdentity.read(processID: sleep.pid) == identity)
    }

    /// argv[0] and the command name are the process's to say; the identity is not.
    @Test func aChosenArgv0OrCommandNameChangesNothing() throws {
        let disguised = try start("/bin/bash", ["-c", "exec -a /usr/bin/gnome-keyring-daemon /bin/sleep 30"])
        defer { stop(disguised) }
        // exec sets the new executable before the new arguments: wait for both.
        let ready = Date().addingTimeInterval(30)
        var cmdline: [UInt8] = []
        while Date() < ready {
            if ProcessControl.executable(of: disguised.pid) == resolved("/bin/sleep") {
                cmdline = (try? FileSystem.contents(of: "/proc/\(disguised.pid)/cmdline")) ?? []
                if !cmdline.isEmpty { break }
            }
            usleep(5_000)
        }
        #expect(String(decoding: cmdline, as: UTF8.self).hasPrefix("/usr/bin/gnome-keyring-daemon\0"))
        #expect(try ProcessIdentity.read(processID: disguised.pid).executable.path == resolved("/bin/sleep"))
    }

    @Test func aProcessThatExitedIsGone() throws {
        let exited = try start("/bin/true")
        #expect(exited.wait(timeout: .seconds(10)) == .exited(0))
        #expect(throws: ProcessIdentityError.gone(processID: exited.pid)) { try ProcessIdentity.read(processID: exited.pid) }
        #expect(throws: ProcessIdentityError.gone(processID: 0)) { try ProcessIdentity.read(processID: 0) }
        #expect(throws: ProcessIdentityError.gone(processID: -1)) { try ProcessIdentity.read(processID: -1) }
    }

    /// A zombie (exited, not yet reaped) still has its /proc directory, but no identity.
    @Test func aZombieIsGone() throws {
        let zombie = try start("/bin/true")
        defer { _ = zombie.wait(timeout: .seconds(5)) }
        let deadline = Date().addingTimeInterval(30)
        var state: Character?
        repeat {
            let text = (try? FileSystem.contents(of: "/proc/\(zombie.pid)/stat")).map { String(decoding: $0, as: UTF8.self) }
            state = text.flatMap(ProcessStat.init(parsing:))?.state
            if state != "Z" { usleep(5_000) }
        } while state != "Z" && Date() < deadline
        try #require(state == "Z", "the child never became a zombie")
        #expect(throws: ProcessIdentityError.gone(processID: zombie.pid)) { try ProcessIdentity.read(processID: zombie.pid) }
    }

    /// Once the file a process runs is deleted or replaced, its identity is still the path it
    /// was started from, marked replaced, and the file is still the one that runs. A file
    /// really named "… (deleted)" is not mistaken for the kernel's mark.
    @Test(arguments: ["sleep-copy", "sleep (deleted)"])
    func aDeletedOrReplacedExecutableIsMarked(name: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.path + "/" + name
        try Executables.copy("/bin/sleep", to: copy)
        let sleep = try start(copy, ["30"])
        defer { stop(sleep) }
        let original = try ProcessIdentity.read(processID: sleep.pid)
        #expect(original.executable.path == resolved(copy))
        #expect(!original.executable.isReplaced)

        try FileSystem.remove(copy)
        let deleted = try ProcessIdentity.read(processID: sleep.pid)
        #expect(deleted.executable.path == original.executable.path)   // the kernel's " (deleted)" is not part of it
        #expect(deleted.executable.isReplaced)
        #expect(deleted.executable.isSameFile(as: original.executable.file))   // (its link count, so its ctime, changed)

        try Executables.copy("/bin/true", to: copy)   // another program at the same path
        let replaced = try ProcessIdentity.read(processID: sleep.pid)
        #expect(replaced.executable.path == original.executable.path)
        #expect(replaced.executable.isReplaced)
        #expect(replaced.executable.isSameFile(as: original.executable.file))
        #expect(!replaced.executable.isSameFile(as: try FileStatus.of(copy)))
    }

    // MARK: Fake /proc trees

    @Test func aFlatpakSandboxNamesItsApp() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        try proc.sandboxFile("[Application]\nname=org.example.Sandboxed\n")
        let identity = try ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root)
        #expect(identity.flatpakApplicationID == "org.example.Sandboxed")
        #expect(identity.executable.path == "/usr/bin/sleep")
        #expect(identity.startTime == 3512345)
    }

    @Test func flatpakInfoFilesFlatpakNeverWritesNameNoApp() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        func appID() throws -> String? { try ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root).flatpakApplicationID }
        let info = proc.sandbox + "/.flatpak-info"

        try proc.sandboxFile("[Runtime]\nname=org.gnome.Platform\n")
        #expect(try appID() == nil)
        try proc.sandboxFile("[Application]\nname=org.example.App\n" + String(repeating: "#", count: FlatpakInfo.sizeLimit))
        #expect(try appID() == nil)
        try FileManager.default.removeItem(atPath: info)

        // A link to a real file: not followed.
        try proc.write(proc.root + "/elsewhere", "[Application]\nname=org.example.Linked\n")
        try FileManager.default.createSymbolicLink(atPath: info, withDestinationPath: proc.root + "/elsewhere")
        #expect(try appID() == nil)
        try FileManager.default.removeItem(atPath: info)

        // A FIFO nobody writes to: not opened for a read that would wait forever.
        #expect(mkfifo(info, 0o600) == 0)
        #expect(try appID() == nil)
        try FileManager.default.removeItem(atPath: info)

        try FileManager.default.createDirectory(atPath: info, withIntermediateDirectories: false)
        #expect(try appID() == nil)
    }

    @Test func aSnapIsNamedByItsAppArmorLabelBeforeItsCgroup() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        func snap() throws -> String? { try ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root).snapName }
        let scope = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2c6a1bd4.scope\n"

        try proc.file("attr/current", "snap.spotify.spotify (enforce)\n")
        try proc.file("cgroup", scope)
        #expect(try snap() == "spotify")
        // AppArmor labels this process, and not as a snap: a scope it may have named itself does not count.
        try proc.file("attr/current", "unconfined\n")
        #expect(try snap() == nil)
        // No AppArmor: the scope is all there is.
        try FileManager.default.removeItem(atPath: proc.directory + "/attr/current")
        #expect(try snap() == "firefox")
        try proc.file("attr/current", "unconfined_u:unconfined_r:unconfined_t:s0\n")   // SELinux
        #expect(try snap() == "firefox")
        // Where the AppArmor-only file exists, it is the one read.
        try proc.file("attr/apparmor/current", "unconfined\n")
        #expect(try snap() == nil)
        try proc.file("attr/apparmor/current", "snap.lxd.lxc (enforce)\n")
        #expect(try snap() == "lxd")
    }

    @Test func anotherMountNamespaceIsReported() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        #expect(try ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root).sharesMountNamespace)
        try FileManager.default.removeItem(atPath: proc.directory + "/ns/mnt")
        try FileManager.default.createSymbolicLink(atPath: proc.directory + "/ns/mnt", withDestinationPath: "mnt:[4026532177]")
        #expect(try !ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root).sharesMountNamespace)
    }

    @Test func missingOrMalformedFilesAreErrorsNotGuesses() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        func read() throws { _ = try ProcessIdentity.read(processID: FakeProc.pid, procRoot: proc.root) }

        try FileManager.default.removeItem(atPath: proc.directory + "/exe")
        #expect(throws: ProcessIdentityError.unreadable(processID: FakeProc.pid, .noSuchFile)) { try read() }
        try FileManager.default.createSymbolicLink(atPath: proc.directory + "/exe", withDestinationPath: "/bin/sleep")

        try FileManager.default.removeItem(atPath: proc.directory + "/root")
        try FileManager.default.createSymbolicLink(atPath: proc.directory + "/root", withDestinationPath: proc.root + "/forbidden")
        try FileManager.default.createDirectory(atPath: proc.root + "/forbidden", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o000])
        if getuid() != 0 {   // root reads it anyway
            #expect(throws: ProcessIdentityError.unreadable(processID: FakeProc.pid, .permissionDenied)) { try read() }
        }

        try proc.file("stat", "4242 (sleep) S 1 2 3\n")
        #expect(throws: ProcessIdentityError.malformed(processID: FakeProc.pid, file: "stat")) { try read() }
        try proc.file("stat", ProcFileParsingTests.sleepStat.replacingFirst(") S ", with: ") Z "))
        #expect(throws: ProcessIdentityError.gone(processID: FakeProc.pid)) { try read() }
        try FileManager.default.removeItem(atPath: proc.directory + "/stat")
        #expect(throws: ProcessIdentityError.gone(processID: FakeProc.pid)) { try read() }
    }
}

/// A fake /proc: `self/ns/mnt`, and for `pid` a `stat`, an `exe` link to /bin/sleep, a
/// `cgroup`, `ns/mnt` (the same namespace as `self`) and a `root` link to an empty sandbox.
struct FakeProc {
    static let pid: Int32 = 4242
    let root: String
    var directory: String { root + "/\(Self.pid)" }
    var sandbox: String { root + "/sandbox" }

    init() throws {
        root = NSTemporaryDirectory() + "/fake-proc-" + UUID().uuidString
        let files = FileManager.default
        for directory in [root + "/self/ns", root + "/\(Self.pid)/ns", root + "/\(Self.pid)/attr", root + "/sandbox"] {
            try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try files.createSymbolicLink(atPath: root + "/self/ns/mnt", withDestinationPath: "mnt:[4026531832]")
        try files.createSymbolicLink(atPath: directory + "/ns/mnt", withDestinationPath: "mnt:[4026531832]")
        try files.createSymbolicLink(atPath: directory + "/exe", withDestinationPath: "/usr/bin/sleep")
        try files.createSymbolicLink(atPath: directory + "/root", withDestinationPath: sandbox)
        try file("stat", ProcFileParsingTests.sleepStat)
        try file("cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n")
    }

    func file(_ name: String, _ text: String) throws {
        try write(directory + "/" + name, text)
    }

    func sandboxFile(_ text: String) throws {
        try write(sandbox + "/.flatpak-info", text)
    }

    func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func remove() {
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root + "/forbidden")
        try? FileManager.default.removeItem(atPath: root)
    }
}
