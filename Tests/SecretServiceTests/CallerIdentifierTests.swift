import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
@testable import SecretService
import SystemKit
import Testing

/// `CallerIdentifier` end to end: real clients call an object on a private bus that answers
/// with what the identifier makes of them.
@Suite(.timeLimit(.minutes(5))) struct CallerIdentifierTests {
    static let dbusSend = "/usr/bin/dbus-send"

    /// Where the kernel says `path` is: every symbolic link resolved.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    static func sha256Hex(ofFile path: String) throws -> String {
        Hex.encode(Digest.sha256(try FileSystem.contents(of: path)))
    }

    /// Runs `executable` with `arguments` (then dbus-send's, calling `server`) and returns the
    /// application and digest the server answered, recording an issue when there is none.
    func identified(by server: IdentifyingServer, running executable: String, _ arguments: [String] = [],
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> (application: String, digest: String)? {
        let child = try ChildProcess(executable, arguments: arguments + server.dbusSendArguments)
        let result = child.wait(timeout: 20)
        let answer = IdentifyingServer.answer(inDBusSendOutput: result.stdout)
        if answer == nil { Issue.record("no answer from \(executable) \(arguments): \(result)", sourceLocation: sourceLocation) }
        return answer
    }

    @Test func dbusSendIsItsExecutableWhateverItCallsItself() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        let expected = "exe:" + Self.resolved(Self.dbusSend)
        let digest = try Self.sha256Hex(ofFile: Self.dbusSend)

        let plain = try identified(by: server, running: Self.dbusSend)
        #expect(plain?.application == expected)
        #expect(plain?.digest == digest)

        // argv[0] is what the caller says.
        let renamed = try identified(by: server, running: "/bin/bash",
                                     ["-c", "exec -a /usr/bin/gnome-keyring-daemon \(Self.dbusSend) \"$@\"", "bash"])
        #expect(renamed?.application == expected)

        // So is the command name: started through a link named otherwise, comm is the link's name.
        let directory = NSTemporaryDirectory() + "coffer-who-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/gnome-keyring-daemon"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Self.dbusSend)
        let linked = try identified(by: server, running: link)
        #expect(linked?.application == expected)

        // Every dbus-send is one file, read once.
        #expect(server.identifier.digests.readCount == 1)
    }

    @Test func aCopyElsewhereIsAnotherApplication() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        let directory = NSTemporaryDirectory() + "coffer-who-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/my-client"
        try Executables.copy(Self.dbusSend, to: copy)

        let copied = try identified(by: server, running: copy)
        #expect(copied?.application == "exe:" + Self.resolved(copy))
        #expect(copied?.application != "exe:" + Self.resolved(Self.dbusSend))
        #expect(copied?.digest == (try Self.sha256Hex(ofFile: Self.dbusSend)))   // the same bytes
        // Replaced while nothing runs it (by the same bytes): another file, read anew.
        try FileSystem.remove(copy)
        try Executables.copy(Self.dbusSend, to: copy)
        _ = try identified(by: server, running: copy)
        #expect(server.identifier.digests.readCount == 2)
    }

    /// A process whose root holds Flatpak's `/.flatpak-info` is that Flatpak app, whatever it
    /// runs; in the same sandbox without the file, it is the program it runs, by a path that is
    /// not this machine's.
    @Test func aFlatpakSandboxIsItsApp() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        let sandboxed = try FakeFlatpakSandbox(flatpakInfo: "[Application]\nname=org.example.Sandboxed\nruntime=runtime/org.example.Platform/x86_64/1\n")
        defer { sandboxed.remove() }
        let result = try sandboxed.run(Self.dbusSend, server.dbusSendArguments, bind: server.bus.directory)
        let answer = IdentifyingServer.answer(inDBusSendOutput: result.stdout)
        #expect(answer?.application == "flatpak:org.example.Sandboxed", "\(result)")

        let unmarked = try FakeFlatpakSandbox(flatpakInfo: nil)
        defer { unmarked.remove() }
        let control = try unmarked.run(Self.dbusSend, server.dbusSendArguments, bind: server.bus.directory)
        // The kernel gives the path in the sandbox's namespace (below where its root was
        // mounted), which names nothing here: the same file, but not one this path names.
        let application = IdentifyingServer.answer(inDBusSendOutput: control.stdout)?.application ?? ""
        #expect(application.hasPrefix("exe:") && application.hasSuffix("/usr/bin/dbus-send" + Caller.replacedMark), "\(control)")
    }
}

/// A sandbox built as Flatpak's bubblewrap builds one: a mount namespace whose root is an
/// empty tmpfs with this machine's /usr and /etc bound into it (and its top-level links, such
/// as /bin -> usr/bin), plus a `/.flatpak-info`; for one program at a time. Built with
/// `unshare -m` as root, in a user namespace of its own otherwise.
struct FakeFlatpakSandbox {
    let directory: String

    /// A sandbox whose `/.flatpak-info` holds `flatpakInfo` (nil: none).
    init(flatpakInfo: String?) throws {
        directory = NSTemporaryDirectory() + "coffer-sandbox-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/root", withIntermediateDirectories: true)
        if let flatpakInfo {
            try Data(flatpakInfo.utf8).write(to: URL(fileURLWithPath: directory + "/flatpak-info"))
        }
    }

    static let script = """
        set -e
        sandbox=$1 bound=$2
        shift 2
        root=$sandbox/root
        mount --make-rprivate /
        mount -t tmpfs -o mode=0755 sandbox "$root"
        for entry in /*; do
            name=${entry#/}
            if [ -L "$entry" ]; then
                ln -s "$(readlink "$entry")" "$root/$name"
            elif [ "$name" = usr ] || [ "$name" = etc ]; then
                mkdir "$root/$name"
                mount --rbind "$entry" "$root/$name"
            fi
        done
        mkdir -p "$root$bound"
        mount --bind "$bound" "$root$bound"
        if [ -f "$sandbox/flatpak-info" ]; then cp "$sandbox/flatpak-info" "$root/.flatpak-info"; fi
        exec chroot "$root" "$@"
        """

    /// Runs `program` with `arguments` inside, with directory `bind` (e.g. a bus's socket
    /// directory) at the same path inside as outside. Fails the test with the reason when the
    /// sandbox cannot be built.
    func run(_ program: String, _ arguments: [String], bind: String,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildResult {
        // Without root, a user namespace in which this user keeps its id (the bus checks it)
        // and the capabilities to mount and chroot.
        let namespaces = getuid() == 0 ? ["-m"] : ["-m", "-U", "--map-current-user", "--keep-caps"]
        // `chroot` is in /usr/sbin, which a normal user's PATH lacks.
        let child = try ChildProcess("/usr/bin/unshare", arguments: namespaces + ["/bin/sh", "-c", Self.script, "sh",
                                                                                  directory, bind, program] + arguments,
                                     environment: Executables.environmentWithSearchPath)
        let result = child.wait(timeout: 20)
        if !result.succeeded {
            Issue.record("the fake Flatpak sandbox (unshare \(namespaces.joined(separator: " ")), tmpfs root, bind mounts, chroot) failed: \(result)",
                         sourceLocation: sourceLocation)
        }
        return result
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
