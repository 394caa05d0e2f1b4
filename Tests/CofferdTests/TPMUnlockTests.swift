import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Unlocking without a password through a TPM key slot, with the real cofferd and coffer and a
/// real software TPM (swtpm) started by each test: at start (`cofferd --unlock-with-tpm`, for
/// headless machines) and later through the running daemon (`coffer unlock --tpm`).
@Suite(.timeLimit(.minutes(3)), .enabled(if: SoftwareTPM.executable != nil, "swtpm is not installed (scripts/setup --tests installs it)"))
struct TPMUnlockTests {
    /// `coffer` with `arguments` on the fixture's bus and `tpm`, its stdin `input`.
    static func coffer(_ f: DaemonFixture, _ tpm: SoftwareTPM, _ arguments: [String], input: String = "") throws -> ChildResult {
        let program = try #require(Executables.built("coffer"))
        return try ChildProcess(program, arguments: arguments, environment: f.environment(tpm.environment()),
                                stdin: Array(input.utf8)).wait(timeout: 60)
    }

    @Test func cofferdUnlocksWithTheTPMAtStartAndCofferThroughItLater() throws {
        let tpm = try SoftwareTPM()
        let f = try DaemonFixture(daemonEnvironment: tpm.environment())
        defer { f.shutdown() }
        let item = try f.client.quickItem("k", attributes: ["tpm": "1"], secret: "kept")
        let added = try Self.coffer(f, tpm, ["--data-dir", f.dataDir, "slots", "add-tpm", "--collection", "login", "--password-stdin"],
                                    input: DaemonFixture.loginPassword + "\n")
        #expect(added.exitCode == 0, "\(added)")
        f.stopDaemon()

        // No password anywhere: the TPM opens login as cofferd starts.
        try f.startDaemon(arguments: ["--unlock-with-tpm"])
        #expect(try !f.client.isLocked(SecretPath.login))
        #expect(try f.client.secretBytes(of: item, session: try f.client.library.openSession()) == Array("kept".utf8))

        // Locked again, coffer asks the running daemon to use its TPM.
        _ = try f.client.library.lock([SecretPath.login])
        let unlocked = try Self.coffer(f, tpm, ["unlock", "--tpm"])
        #expect(unlocked.exitCode == 0 && unlocked.stdout.contains("unlocked (in cofferd"), "\(unlocked)")
        #expect(try !f.client.isLocked(SecretPath.login))
        let audit = try f.auditLog()
        #expect(audit.contains { ($0["detail"] as? String) == "cofferd --unlock-with-tpm" && ($0["outcome"] as? String) == "ok" })
        #expect(audit.contains { ($0["detail"] as? String) == "TPM key slot, asked over the bus" })
    }

    @Test func anotherMachinesTPMLeavesCofferdLockedAndSaysWhy() throws {
        let tpm = try SoftwareTPM()
        let f = try DaemonFixture(daemonEnvironment: tpm.environment())
        defer { f.shutdown() }
        let added = try Self.coffer(f, tpm, ["--data-dir", f.dataDir, "slots", "add-tpm", "--password-stdin"],
                                    input: DaemonFixture.loginPassword + "\n")
        #expect(added.exitCode == 0, "\(added)")
        f.stopDaemon()

        // The same files with a new TPM (another machine, or this one's TPM cleared).
        let other = try SoftwareTPM()
        let cofferd = try ChildProcess(try DaemonFixture.cofferdPath, arguments: ["--foreground", "--data-dir", f.dataDir, "--unlock-with-tpm"],
                                       environment: f.environment(other.environment()))
        let ended = cofferd.wait(timeout: 30)
        #expect(ended.exitCode == 3, "\(ended)")
        #expect(ended.stderr.contains("another TPM"), "\(ended.stderr)")

    }
}
