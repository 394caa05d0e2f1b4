import Foundation
import SystemKit
import Testing

@Suite struct SubprocessTests {
    /// Runs `sh -c script` with stdin fed `input`, and returns its stdout and how it ended.
    func shell(_ script: String, input: [UInt8] = [], environment: [String: String] = ["PATH": "/usr/bin:/bin"],
               workingDirectory: String? = nil, newSession: Bool = false) throws -> (output: String, ended: Termination) {
        let stdin = try FileDescriptor.pipe(), stdout = try FileDescriptor.pipe()
        let child = try Subprocess("/bin/sh", arguments: ["-c", script], environment: environment,
                                   standardInput: stdin.readEnd, standardOutput: stdout.writeEnd,
                                   workingDirectory: workingDirectory, newSession: newSession)
        stdin.readEnd.close()
        stdout.writeEnd.close()
        try stdin.writeEnd.writeAll(input)
        stdin.writeEnd.close()
        let output = try stdout.readEnd.readAll()
        stdout.readEnd.close()
        return (String(decoding: output, as: UTF8.self), child.wait())
    }

    @Test func redirectsStandardInputAndOutputAndReportsTheExitStatus() throws {
        let run = try shell("tr a-z A-Z; exit 7", input: Array("hello\n".utf8))
        #expect(run.output == "HELLO\n")
        #expect(run.ended == .exited(7))
    }

    @Test func environmentWorkingDirectoryAndSession() throws {
        let run = try shell("echo $GREETING; pwd", environment: ["GREETING": "hi"], workingDirectory: "/tmp")
        #expect(run.output == "hi\n/tmp\n")
        // Field 6 of /proc/<pid>/stat is the session: the shell leads a new one only if asked.
        let own = try shell("read _ _ _ _ _ sid _ < /proc/$$/stat; [ $sid = $$ ] && echo leader || echo member",
                            newSession: true)
        #expect(own.output == "leader\n")
        let inherited = try shell("read _ _ _ _ _ sid _ < /proc/$$/stat; [ $sid = $$ ] && echo leader || echo member")
        #expect(inherited.output == "member\n")
    }

    @Test func inheritsNoOtherDescriptorsAndNoBlockedSignals() throws {
        // Neither close-on-exec nor 0...2: only closing everything from 3 keeps it from the child.
        let extra = try FileDescriptor.open("/dev/null", .readOnly)
        defer { extra.close() }
        let leaked = FileDescriptor(rawValue: dup(extra.rawValue))
        defer { leaked.close() }
        // Every signal blocked here, as in threads of a test runner or a daemon.
        var all = sigset_t()
        sigfillset(&all)
        var old = sigset_t()
        pthread_sigmask(SIG_SETMASK, &all, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }

        let run = try shell("[ -e /proc/self/fd/\(leaked.rawValue) ] && echo leaked; grep SigBlk /proc/self/status")
        #expect(!run.output.contains("leaked"))
        #expect(run.output.contains("0000000000000000"), "\(run.output)")
    }

    @Test func signalsWaitsWithATimeoutAndReapsOnce() throws {
        let child = try Subprocess("/bin/sleep", arguments: ["30"], environment: [:])
        #expect(child.exitStatus() == nil)
        #expect(child.wait(timeout: .milliseconds(50)) == nil)
        child.send(signal: SIGTERM)
        #expect(child.wait(timeout: .seconds(10)) == .signalled(SIGTERM))
        #expect(child.wait() == .signalled(SIGTERM))   // reaped once; the answer stays
        child.send(signal: SIGKILL)                    // no longer signalled: a no-op
    }

    @Test func aMissingProgramThrowsNamingIt() {
        let error = #expect(throws: Errno.self) {
            try Subprocess("/nonexistent/program", environment: [:])
        }
        #expect(error == .noSuchFile)
        #expect(error?.description.hasSuffix("/nonexistent/program failed: No such file or directory") == true)
    }
}
