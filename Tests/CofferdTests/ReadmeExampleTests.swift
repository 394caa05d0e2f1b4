import CofferTestSupport
import Foundation
import Testing

/// The README's headless/CI example, as written: no wait between starting cofferd and using it.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Executables.inPath("secret-tool") != nil, "secret-tool is not installed"))
struct ReadmeExampleTests {
    @Test func theCIExampleWorksAsWritten() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }   // cofferd leaves with its bus
        let root = NSTemporaryDirectory() + "coffer-readme-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cofferd = try DaemonFixture.cofferdPath
        let script = """
            set -e
            printf '%s\\n' "$PASSWORD" | cofferd --unlock --data-dir "$DATA"
            printf '%s' "$TOKEN" | secret-tool store --label='CI token' service ci account bot
            secret-tool lookup service ci account bot
            """
        let directory = URL(fileURLWithPath: cofferd).deletingLastPathComponent().path
        let environment = bus.environment(["PATH": directory + ":/usr/bin:/bin", "HOME": root, "DATA": root + "/data",
                                           "PASSWORD": "ci password", "TOKEN": "ci-token-value"])
        let result = try ChildProcess("/bin/sh", arguments: ["-c", script], environment: environment).wait(timeout: 60)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "ci-token-value", "\(result)")
    }
}
