import CofferTestSupport
import Foundation
import Testing

/// When the memory for keys and secrets cannot all be locked into RAM (a locked-memory limit
/// below what cofferd may lock), cofferd says so and what to do, rather than silently risking
/// secrets in swap.
@Suite(.timeLimit(.minutes(5))) struct SecureMemoryWarningTests {
    @Test func anUnlockablePoolIsReported() throws {
        let prlimit = try #require(Executables.inPath("prlimit"), "prlimit (util-linux) is not installed")
        // root may lock memory whatever its limit: take that capability away first.
        var command = [prlimit, "--memlock=1048576", try DaemonFixture.cofferdPath]
        if getuid() == 0 {
            command.insert(contentsOf: [try #require(Executables.inPath("setpriv"), "setpriv is not installed"),
                                        "--bounding-set=-ipc_lock"], at: 0)
        }
        let directory = NSTemporaryDirectory() + "coffer-memlock-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // An address nobody listens on: the warning comes before cofferd connects, then it stops.
        let child = try ChildProcess(command[0], arguments: Array(command.dropFirst()) + [
            "--foreground", "--data-dir", directory, "--address", "unix:path=\(directory)/no-bus",
        ], environment: ProcessInfo.processInfo.environment)
        let result = child.wait(timeout: 30)
        #expect(result.exitCode != 0)
        #expect(result.stderr.contains("cannot all be locked into RAM"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("LimitMEMLOCK"), "stderr: \(result.stderr)")
    }
}
