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
    static func run(_ tool: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: TimeInterval = 120) throws -> ChildResult {
        try ChildProcess(tool, arguments: arguments, environment: environment, workingDirectory: root)
            .wait(timeout: timeout)
    }

    /// A new empty directory under the temporary directory; the caller removes it.
    static func temporaryDirectory(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "coffer-\(label)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
