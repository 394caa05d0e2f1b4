import CofferTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct TestSupportTests {
    @Test func childGetsAnEmptySignalMaskEvenFromABlockingThread() throws {
        // Block SIGTERM here, as Swift Testing threads do; the child must still die of SIGTERM.
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTERM)
        var old = sigset_t()
        pthread_sigmask(SIG_BLOCK, &block, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }

        let child = try ChildProcess("sleep", arguments: ["30"])
        let start = Date()
        let result = child.terminate(grace: 5)
        #expect(result.signal == SIGTERM, "\(result)")
        #expect(Date().timeIntervalSince(start) < 4)

        let mask = try ChildProcess("sh", arguments: ["-c", "grep SigBlk /proc/self/status"]).wait(timeout: 10)
        #expect(mask.stdout.contains("0000000000000000"), "\(mask)")
    }

    @Test func stdinStdoutStderrAndExitCode() throws {
        let input = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let cat = try ChildProcess("cat", stdin: input).wait(timeout: 20)
        #expect(cat.succeeded)
        #expect(cat.stdoutBytes == input)

        let sh = try ChildProcess("sh", arguments: ["-c", "echo out; echo err >&2; exit 3"],
                                  environment: ["PATH": "/usr/bin:/bin"]).wait(timeout: 10)
        #expect(sh.exitCode == 3)
        #expect(sh.stdout == "out\n")
        #expect(sh.stderr == "err\n")

        let env = try ChildProcess("sh", arguments: ["-c", "echo $COFFER_X; pwd"], environment: ["COFFER_X": "42"],
                                   workingDirectory: "/tmp").wait(timeout: 10)
        #expect(env.stdout == "42\n/tmp\n")
    }

    @Test func waitKillsAfterTheTimeout() throws {
        let start = Date()
        let result = try ChildProcess("sleep", arguments: ["30"]).wait(timeout: 0.3)
        #expect(result.timedOut)
        #expect(result.signal == SIGKILL)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(throws: ChildProcessError.self) { try ChildProcess("no-such-program-coffer") }
    }

    @Test func privateBusStartsAndStops() throws {
        let bus = try PrivateBus()
        #expect(bus.address.hasPrefix("unix:"))
        #expect(bus.environment()["DBUS_SESSION_BUS_ADDRESS"] == bus.address)
        #expect(FileManager.default.fileExists(atPath: bus.directory + "/bus.conf"))
        let pid = bus.pid
        #expect(kill(pid, 0) == 0)
        bus.stop()
        #expect(kill(pid, 0) != 0)   // reaped, gone
        #expect(!FileManager.default.fileExists(atPath: bus.directory))
        bus.stop()   // idempotent
    }

    @Test func executablesAreFound() {
        #expect(FileManager.default.fileExists(atPath: Executables.buildProductsDirectory.path))
        #expect(Executables.inPath("sh") != nil)
        #expect(Executables.inPath("dbus-daemon") != nil)
        #expect(Executables.resolve("/bin/sh") == "/bin/sh")
        #expect(Executables.built("no-such-product") == nil)
    }
}
