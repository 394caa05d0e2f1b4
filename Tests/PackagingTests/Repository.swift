import CofferTestSupport
import Foundation
import Testing

/// The source tree the tests check (the packaging files, the Makefile, the scripts), and a
/// way to run tools on it.
enum Repository {
    /// The repository's root directory.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The contents of a file of the repository, e.g. `packaging/cofferd.service.in`.
    static func text(_ relativePath: String) throws -> String {
        try String(contentsOfFile: root + "/" + relativePath, encoding: .utf8)
    }

    /// Runs `tool` (a path or a name in `PATH`) in the repository root and returns how it
    /// ended; `environment` replaces this process's environment when given.
    ///
    /// The wait happens on a thread of its own: these tools (lintian, dpkg, make install) take
    /// seconds to a minute, and blocking one of Swift Testing's few shared threads for that long
    /// starves the other suites into their time limits.
    static func run(_ tool: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: TimeInterval = 120) async throws -> ChildResult {
        let child = try ChildProcess(tool, arguments: arguments, environment: environment, workingDirectory: root)
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: child.wait(timeout: timeout)) }.start()
        }
    }

    /// `run`, for the few quick look-ups made while deciding whether a suite runs at all.
    static func runNow(_ tool: String, _ arguments: [String]) throws -> ChildResult {
        try ChildProcess(tool, arguments: arguments, workingDirectory: root).wait(timeout: 30)
    }

    /// A new empty directory under the temporary directory; the caller removes it.
    static func temporaryDirectory(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "coffer-\(label)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
