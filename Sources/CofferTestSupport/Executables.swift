import Foundation
import SystemKit

/// Finds executables for end-to-end tests: the package's own products (built by `swift test`
/// next to the test bundle) and system tools from `PATH` and the sbin directories (`searchPath`).
public enum Executables {
    /// The directory holding the running test bundle, i.e. the build products directory
    /// (`.build/<triple>/debug`), where `swift test` also puts `cofferd` and `coffer`.
    public static var buildProductsDirectory: URL {
        let runner = Bundle.main.executableURL
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        var dir = runner.deletingLastPathComponent()
        // On Darwin the runner sits inside a .xctest bundle; walk out of it.
        while dir.path.contains(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir
    }

    /// Path of a product built by this package (e.g. `cofferd`), or nil if it is not built.
    public static func built(_ name: String) -> String? {
        let candidates = [buildProductsDirectory.appendingPathComponent(name).path]
            + ["debug", "release"].map { FileManager.default.currentDirectoryPath + "/.build/\($0)/\(name)" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// This test process's executable, as the service identifies it (the test bundle).
    public static var thisProcess: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Where system tools are looked for: this process's `PATH` (else /usr/local/bin:/usr/bin:/bin),
    /// then those of /usr/local/sbin, /usr/sbin and /sbin it lacks. A normal user's `PATH` on
    /// Debian has none of them, yet tests run tools that live there (`chroot`, and `ldconfig` and
    /// `start-stop-daemon`, which dpkg runs): as `PATH` for such a tool's child processes, too.
    public static var searchPath: String {
        let path = ProcessInfo.processInfo.environment["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/bin:/usr/bin:/bin"
        let listed = Set(path.split(separator: ":").map { $0.hasSuffix("/") ? String($0.dropLast()) : String($0) })
        return ([path] + ["/usr/local/sbin", "/usr/sbin", "/sbin"].filter { !listed.contains($0) }).joined(separator: ":")
    }

    /// This process's environment with `PATH` set to `searchPath`, for a tool that runs
    /// programs from the sbin directories (dpkg runs `ldconfig` and `start-stop-daemon`, a
    /// sandbox script `chroot`).
    public static var environmentWithSearchPath: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = searchPath
        return environment
    }

    /// Path of `name` found in `searchPath` (e.g. `secret-tool`, `gdbus`, `dbus-daemon`,
    /// `chroot`), or nil.
    public static func inPath(_ name: String) -> String? {
        name.contains("/") ? nil : FileSystem.executable(named: name, searchPath: searchPath)
    }

    /// `name` if it is a path (contains `/`) to an executable, else a built product, else `PATH`.
    public static func resolve(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        return built(name) ?? inPath(name)
    }

    /// Copies the program at `source` to `target` in a child process, so that the copy can be
    /// run at once.
    ///
    /// Writing it from this process would not do: while the file is open for writing here, a
    /// child another test starts at that moment holds the descriptor too until it closes its
    /// descriptors, and running the copy meanwhile fails with ETXTBSY ("Text file busy").
    public static func copy(_ source: String, to target: String) throws {
        try shell("cp -- \"$1\" \"$2\"", source, target)
    }

    /// Appends one zero byte to the program at `path` (still a program that runs, no longer
    /// the same file), in a child process, for the reason `copy(_:to:)` gives.
    public static func appendZeroByte(to path: String) throws {
        try shell("printf '\\0' >> \"$1\"", path)
    }

    private static func shell(_ script: String, _ arguments: String...) throws {
        let result = try ChildProcess("/bin/sh", arguments: ["-c", script, "sh"] + arguments, environment: ["PATH": "/usr/bin:/bin"])
            .wait(timeout: 30)
        guard result.succeeded else { throw ChildProcessError.failed("sh -c \(script): \(result)") }
    }
}
