import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SystemKit
import Testing

/// cofferd as a command: where a detached daemon logs, `--stop`, and its errors (one
/// `cofferd: ` line, the documented exit status) when the name is taken or the options are bad.
@Suite(.timeLimit(.minutes(5))) struct DaemonCommandTests {
    /// Runs the built cofferd with `arguments` on the fixture's bus.
    static func cofferd(_ f: DaemonFixture, _ arguments: [String]) throws -> ChildResult {
        try ChildProcess(try DaemonFixture.cofferdPath, arguments: arguments, environment: f.environment(), stdin: [])
            .wait(timeout: 60)
    }

    @Test func detachedItTellsTheTerminalItStartedThenLogsToTheSystemLogUntilStopped() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        #expect(f.stopDaemon()?.exitCode == 0)
        let logPath = f.root + "/log"
        let log = try DatagramSocket.bound(at: logPath)
        defer { log.close() }

        let daemon = try Detached(f, password: Array("pw".utf8), arguments: ["--log-socket", logPath])
        defer { daemon.stop() }
        #expect(daemon.launched.exitCode == 0, "\(daemon.launched)")
        #expect(daemon.launched.stderr.contains("cofferd: serving org.freedesktop.secrets"), "\(daemon.launched)")
        #expect(daemon.pid > 0)

        let stop = try Self.cofferd(f, ["--stop"])
        #expect(stop.exitCode == 0, "\(stop)")
        #expect(stop.stderr.hasPrefix("cofferd: stopped cofferd :") && stop.stderr.contains("PID \(daemon.pid)"), "\(stop)")
        #expect(!ProcessControl.isRunning(daemon.pid) || waitForExit(of: daemon.pid, timeout: 5))
        #expect(throws: (any Error).self) { try DBusConnection(address: f.bus.address).nameOwner(SecretServiceClient.busName) }

        var lines: [String] = []
        while let datagram = try log.receive(waitingAtMost: 2000) {
            lines.append(String(decoding: datagram, as: UTF8.self))
            if lines.last?.hasSuffix("stopped") == true { break }
        }
        #expect(lines.contains("<14>cofferd[\(daemon.pid)]: received signal 15, stopping"), "\(lines)")
        #expect(lines.last == "<14>cofferd[\(daemon.pid)]: stopped", "\(lines)")
    }

    @Test func stopSaysWhenThereIsNothingToStopOrTheProviderIsNotCofferd() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        #expect(f.stopDaemon()?.exitCode == 0)
        let nothing = try Self.cofferd(f, ["--stop"])
        #expect(nothing.exitCode == 1 && nothing.stderr == "cofferd: no Secret Service serves this session bus, so there is nothing to stop\n", "\(nothing)")

        // Another provider (this test process) is left alone.
        let other = try DBusConnection(address: f.bus.address)
        defer { other.close() }
        #expect(try other.requestName(SecretServiceClient.busName, flags: [.doNotQueue]) == .primaryOwner)
        let notOurs = try Self.cofferd(f, ["--stop"])
        #expect(notOurs.exitCode == 1 && notOurs.stderr.contains("which is not cofferd"), "\(notOurs)")
        #expect(try other.nameOwner(SecretServiceClient.busName) == other.uniqueName)
    }

    @Test func aTakenNameIsExplainedWithAndWithoutReplace() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        let running = try Self.cofferd(f, ["--foreground", "--data-dir", f.root + "/other"])
        #expect(running.exitCode == 4, "\(running)")
        #expect(running.stderr.hasPrefix("cofferd: org.freedesktop.secrets is already served by :")
                && running.stderr.contains("PID \(f.daemonPID ?? 0), ") && running.stderr.contains("start cofferd with --replace"), "\(running)")
        // It names the program, though cofferd hides its executable from its user (non-dumpable).
        #expect(running.stderr.contains("cofferd) is already") || running.stderr.contains("cofferd). "), "\(running)")
        #expect(running.stderr.split(separator: "\n").count == 1)
        #expect(f.stopDaemon()?.exitCode == 0)

        // An owner that does not allow replacement: --replace is refused, and said so.
        let other = try DBusConnection(address: f.bus.address)
        defer { other.close() }
        #expect(try other.requestName(SecretServiceClient.busName, flags: [.doNotQueue]) == .primaryOwner)
        let refused = try Self.cofferd(f, ["--foreground", "--replace", "--data-dir", f.root + "/other"])
        #expect(refused.exitCode == 4, "\(refused)")
        #expect(refused.stderr.contains("does not let another Secret Service take over, even with --replace"), "\(refused)")
        #expect(!refused.stderr.contains("start cofferd with --replace"), "\(refused)")
    }

    @Test func usageErrorsAreOneLineWithStatusTwo() throws {
        let f = try DaemonFixture(unlock: false)
        defer { f.shutdown() }
        for arguments in [["--bogus"], ["--stop", "--unlock"], ["--data-dir"]] {
            let result = try Self.cofferd(f, arguments)
            #expect(result.exitCode == 2, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("cofferd: ") && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result)")
        }
        let help = try Self.cofferd(f, ["--help"])
        #expect(help.exitCode == 0 && help.stdout.contains("EXIT STATUS") && help.stdout.contains("--stop"), "\(help)")
    }
}
