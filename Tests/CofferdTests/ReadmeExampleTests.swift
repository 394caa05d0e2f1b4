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
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let cofferd = try DaemonFixture.cofferdPath
        let script = """
            set -e
            printf '%s\\n' "$PASSWORD" | cofferd --unlock --data-dir "$DATA"
            printf '%s\\n' "$PASSWORD" | coffer policy open --password-stdin --data-dir "$DATA"
            printf '%s' "$TOKEN" | secret-tool store --label='CI token' service ci account bot
            secret-tool lookup service ci account bot
            # Another program than the one that stored it reads it too (the reason for the policy).
            cp "$(command -v secret-tool)" "$HOME/other-tool"
            "$HOME/other-tool" lookup service ci account bot
            """
        let directory = URL(fileURLWithPath: cofferd).deletingLastPathComponent().path   // coffer is beside it
        let environment = bus.environment(["PATH": directory + ":/usr/bin:/bin", "HOME": root, "DATA": root + "/data",
                                           "PASSWORD": "ci password", "TOKEN": "ci-token-value"])
        let result = try ChildProcess("/bin/sh", arguments: ["-c", script], environment: environment).wait(timeout: 60)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasSuffix("\nci-token-valueci-token-value"), "\(result)")
    }
}
