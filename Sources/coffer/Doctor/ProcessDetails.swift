import SystemKit

/// What /proc tells about a process (fully only for this user's own processes): its program,
/// arguments, environment and terminal.
struct ProcessDetails {
    let pid: UInt32

    private var directory: String { "/proc/\(pid)" }

    /// The program file it runs, or nil when /proc does not tell (another user's process).
    var executable: String? { ProcessControl.executable(of: Int32(bitPattern: pid)) }

    /// The program's name: the executable's file name, else the kernel's `comm` (readable for
    /// any process, cut to 15 characters).
    var programName: String? {
        if let executable { return executable.split(separator: "/").last.map(String.init) }
        return (try? FileSystem.contents(of: directory + "/comm")).map {
            String(decoding: $0, as: UTF8.self).trimmingWhitespace()
        }
    }

    /// Its command line after the program name.
    var arguments: [String]? {
        (try? FileSystem.contents(of: directory + "/cmdline")).map { Array(Self.nulSeparated($0).dropFirst()) }
    }

    /// Its environment, or nil when /proc does not give it.
    var environment: [String: String]? {
        guard let bytes = try? FileSystem.contents(of: directory + "/environ") else { return nil }
        var result: [String: String] = [:]
        for entry in Self.nulSeparated(bytes) {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            result[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return result
    }

    /// Its working directory (to resolve relative paths in its arguments).
    var workingDirectory: String? { FileSystem.symbolicLinkTarget(directory + "/cwd") }

    /// The terminal its standard error, output or input is (e.g. /dev/pts/3), if any.
    var terminal: String? {
        for descriptor in [2, 1, 0] {
            if let target = FileSystem.symbolicLinkTarget("\(directory)/fd/\(descriptor)"),
               target.hasPrefix("/dev/pts/") || target.hasPrefix("/dev/tty") {
                return target
            }
        }
        return nil
    }

    /// The value of `--name VALUE` or `--name=VALUE` among its arguments.
    func option(_ name: String) -> String? {
        guard let arguments else { return nil }
        for (index, argument) in arguments.enumerated() {
            if argument == "--" + name, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--\(name)=") { return String(argument.dropFirst(name.count + 3)) }
        }
        return nil
    }

    /// `path` as the process sees it (relative paths from its working directory).
    func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let workingDirectory else { return path }
        return workingDirectory + "/" + path
    }

    private static func nulSeparated(_ bytes: [UInt8]) -> [String] {
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true { parts.removeLast() }   // the terminating NUL
        return parts.map { String(decoding: $0, as: UTF8.self) }
    }
}
