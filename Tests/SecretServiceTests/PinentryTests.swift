import CofferCrypto
import CofferTestSupport
import Foundation
import SecretService
import Testing

/// A FakePinentry set-up: its own directory with a script of answers and a log of what it was
/// sent, and the environment that points the fake at them.
private final class FakeSetup {
    let directory: String
    let script: String
    let log: String
    let fake: String

    init(answers: [String]?) throws {
        fake = try #require(Executables.built("FakePinentry"), "FakePinentry is not built")
        directory = NSTemporaryDirectory() + "pinentry-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        script = directory + "/script"
        log = directory + "/log"
        if let answers {
            try Data(answers.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: script))
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The fake's environment (nothing inherited, so no GPG_TTY/DISPLAY/TERM unless given).
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["FAKE_PINENTRY_SCRIPT": script, "FAKE_PINENTRY_LOG": log, "PATH": "/usr/bin:/bin"]
            .merging(extra) { $1 }
    }

    func pinentry(_ extra: [String: String] = [:], timeout: Duration = .seconds(20)) -> Pinentry {
        Pinentry(program: fake, environment: environment(extra), timeout: timeout)
    }

    /// Every line the fakes logged (commands exactly as received, and "PID n" lines).
    var logLines: [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    /// Logged lines that are the given command (e.g. "SETERROR"), with their arguments.
    func commands(_ name: String) -> [String] {
        logLines.filter { $0 == name || $0.hasPrefix(name + " ") }
    }

    /// The process ids of the fakes started so far.
    var pids: [pid_t] {
        logLines.compactMap { $0.hasPrefix("PID ") ? pid_t($0.dropFirst(4)) : nil }
    }

    /// The answers not yet consumed.
    var remainingScript: String {
        (try? String(contentsOfFile: script, encoding: .utf8)) ?? ""
    }
}

/// True if no process (running or zombie) has this pid any more.
private func processIsGone(_ pid: pid_t) -> Bool {
    kill(pid, 0) == -1 && errno == ESRCH
}

private func request(error: String? = nil, confirm: Bool = false) -> PasswordRequest {
    PasswordRequest(title: "Unlock Keyring", description: "An application wants access to the keyring 'login'.",
                    prompt: "Password:", error: error, confirm: confirm)
}

/// The password bytes, or nil (recording an issue) for any other answer.
private func passwordBytes(_ answer: PasswordAnswer, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8]? {
    guard case .password(let secret) = answer else {
        Issue.record("expected a password, got \(answer)", sourceLocation: sourceLocation)
        return nil
    }
    return secret.unprotectedArray(0..<secret.count)
}

private func unavailableText(_ answer: PasswordAnswer) -> String? {
    if case .unavailable(let text) = answer { return text }
    return nil
}

@Suite("Pinentry (Assuan client) against FakePinentry")
struct PinentryTests {
    @Test("passwords come back byte for byte: unicode, %, spaces, a trailing space, empty")
    func passwordsExact() throws {
        let passwords = ["correct horse", "pä§§wörd 🔑 ✓", "100%25 %% %0A literal", "trailing space ",
                         "  leading", "tab\there", ""]
        let setup = try FakeSetup(answers: passwords)
        let pinentry = setup.pinentry()
        for expected in passwords {
            let answer = pinentry.ask(request())
            #expect(passwordBytes(answer) == Array(expected.utf8), "for \(expected.debugDescription)")
        }
        #expect(setup.remainingScript.isEmpty)
        #expect(setup.commands("GETPIN").count == passwords.count)
        #expect(setup.commands("BYE").count == passwords.count, "each conversation ends with BYE")
    }

    @Test("a long password spread over several D lines is joined")
    func longPassword() throws {
        let long = String(repeating: "abc%é\u{1F511}", count: 300)   // ~3600 bytes escaped
        let setup = try FakeSetup(answers: [long])
        let bytes = passwordBytes(setup.pinentry().ask(request()))
        #expect(bytes == Array(long.utf8), "got \(bytes?.count ?? 0) bytes, expected \(long.utf8.count)")
    }

    @Test("the texts are sent percent-escaped; SETERROR only when there is an error")
    func textsSent() throws {
        let setup = try FakeSetup(answers: ["one", "two"])
        let pinentry = setup.pinentry()
        let first = PasswordRequest(title: "Unlock 100%", description: "Line one\nLine two\r\nend",
                                    prompt: "Passwort für „login“:")
        _ = passwordBytes(pinentry.ask(first))
        #expect(setup.commands("SETTITLE") == ["SETTITLE Unlock 100%25"])
        #expect(setup.commands("SETDESC") == ["SETDESC Line one%0ALine two%0D%0Aend"])
        #expect(setup.commands("SETPROMPT") == ["SETPROMPT Passwort für „login“:"])
        #expect(setup.commands("SETERROR").isEmpty)
        #expect(setup.commands("SETREPEAT").isEmpty)

        _ = passwordBytes(pinentry.ask(request(error: "Wrong password, try again.")))
        #expect(setup.commands("SETERROR") == ["SETERROR Wrong password, try again."])
        // The error is set before GETPIN of the second conversation.
        let lines = setup.logLines
        let errorIndex = try #require(lines.firstIndex(of: "SETERROR Wrong password, try again."))
        #expect(lines.lastIndex(of: "GETPIN").map { $0 > errorIndex } == true)
    }

    @Test("a description too long for one Assuan line is shortened, not rejected")
    func longDescriptionTruncated() throws {
        let setup = try FakeSetup(answers: ["pw"])
        let description = String(repeating: "Ünïcode and 100% newline\n", count: 200)
        let answer = setup.pinentry().ask(PasswordRequest(title: "T", description: description))
        #expect(passwordBytes(answer) == Array("pw".utf8))
        let sent = try #require(setup.commands("SETDESC").first)
        #expect(sent.utf8.count <= 1000)
        #expect(sent.utf8.count > 900, "uses the room there is")
        #expect(sent.hasSuffix("…"))
        #expect(sent.hasPrefix("SETDESC Ünïcode and 100%25 newline%0AÜnïcode"))
    }

    @Test("cancel, and a missing script, give .cancelled")
    func cancelled() throws {
        let setup = try FakeSetup(answers: ["CANCEL"])
        let answer = setup.pinentry().ask(request())
        guard case .cancelled = answer else {
            Issue.record("expected .cancelled, got \(answer)")
            return
        }
        let empty = try FakeSetup(answers: nil)
        guard case .cancelled = empty.pinentry().ask(request()) else {
            Issue.record("expected .cancelled for an empty script")
            return
        }
        #expect(setup.commands("BYE").count == 1, "a cancelled conversation still ends politely")
    }

    @Test("confirm sends SETREPEAT and takes the pinentry's confirmed PIN")
    func confirmUsesSetRepeat() throws {
        let setup = try FakeSetup(answers: ["new secret"])
        let answer = setup.pinentry().ask(request(confirm: true))
        #expect(passwordBytes(answer) == Array("new secret".utf8))
        #expect(setup.commands("SETREPEAT") == ["SETREPEAT Repeat:"])
        #expect(setup.commands("SETREPEATERROR").count == 1)
        #expect(setup.commands("GETPIN").count == 1, "the pinentry repeated, no second GETPIN")
    }

    @Test("confirm with a pinentry that ignores SETREPEAT asks twice itself and rejects a mismatch")
    func confirmFallback() throws {
        let setup = try FakeSetup(answers: ["first", "typo", "second", "second"])
        let answer = setup.pinentry(["FAKE_PINENTRY_NO_REPEAT": "1"]).ask(request(confirm: true))
        #expect(passwordBytes(answer) == Array("second".utf8))
        #expect(setup.commands("GETPIN").count == 4)
        #expect(setup.commands("SETERROR") == ["SETERROR The passwords do not match."])
        #expect(setup.commands("SETPROMPT").filter { $0 == "SETPROMPT Repeat:" }.count == 2)
    }

    @Test("a pinentry that does not answer is killed after the timeout and reaped")
    func timeout() throws {
        let setup = try FakeSetup(answers: ["HANG"])
        let started = ContinuousClock.now
        let answer = setup.pinentry(timeout: .seconds(1)).ask(request())
        let elapsed = ContinuousClock.now - started
        #expect(unavailableText(answer) == "pinentry timed out")
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(5))
        let pid = try #require(setup.pids.first)
        #expect(processIsGone(pid), "the hanging fake \(pid) was killed and reaped")
    }

    @Test("ERR answers other than cancel give .unavailable with the pinentry's text")
    func otherErrors() throws {
        let setup = try FakeSetup(answers: ["FAIL", "TIMEOUT"])
        let pinentry = setup.pinentry()
        let failed = unavailableText(pinentry.ask(request()))
        #expect(failed == "FakePinentry failed: General error", "got \(failed ?? "nil")")
        #expect(unavailableText(pinentry.ask(request())) == "pinentry timed out")
    }

    @Test("a pinentry that exits without answering gives .unavailable")
    func childExits() throws {
        let setup = try FakeSetup(answers: ["EXIT"])
        let text = unavailableText(setup.pinentry().ask(request()))
        #expect(text?.contains("exited before answering") == true, "got \(text ?? "nil")")
        #expect(text?.contains("exit status 3") == true, "got \(text ?? "nil")")

        // A "pinentry" that closes its stdin, then greets: our first write hits a closed pipe,
        // which must be an answer (the child killed and reaped), not a SIGPIPE.
        let closer = setup.directory + "/closer"
        try Data("#!/bin/sh\nexec 0<&-\necho 'OK hello'\nexec sleep 30\n".utf8).write(to: URL(fileURLWithPath: closer))
        chmod(closer, 0o755)
        let started = ContinuousClock.now
        let closed = unavailableText(Pinentry(program: closer, environment: ["PATH": "/usr/bin:/bin"]).ask(request()))
        #expect(closed == "closer closed the connection before answering", "got \(closed ?? "nil")")
        #expect(ContinuousClock.now - started < .seconds(10), "did not wait for the sleeping child")

        // One that greets and quits at once (EOF or a closed pipe, whichever comes first).
        let quitter = setup.directory + "/quitter"
        try Data("#!/bin/sh\necho 'OK hello'\nexit 0\n".utf8).write(to: URL(fileURLWithPath: quitter))
        chmod(quitter, 0o755)
        for _ in 0..<5 {
            let answer = Pinentry(program: quitter, environment: ["PATH": "/usr/bin:/bin"]).ask(request())
            #expect(unavailableText(answer)?.contains("quitter") == true, "got \(answer)")
        }
        // Something that never greets with OK.
        let answer = Pinentry(program: "/bin/echo", environment: [:], timeout: .seconds(5)).ask(request())
        #expect(unavailableText(answer) != nil, "got \(answer)")
    }

    @Test("every child is reaped: no fake process or zombie is left after any outcome")
    func childrenReaped() throws {
        let setup = try FakeSetup(answers: ["pw", "CANCEL", "FAIL", "EXIT", ""])
        let pinentry = setup.pinentry()
        for _ in 0..<5 { _ = pinentry.ask(request()) }
        let pids = setup.pids
        #expect(pids.count == 5)
        for pid in pids {
            #expect(processIsGone(pid), "fake \(pid) still exists (running or zombie)")
        }
    }

    @Test("terminal and display settings go to the pinentry as OPTIONs")
    func options() throws {
        let setup = try FakeSetup(answers: ["a", "b"])
        _ = passwordBytes(setup.pinentry(["GPG_TTY": "/dev/pts/7", "TERM": "xterm-256color",
                                          "DISPLAY": ":1", "LANG": "de_DE.UTF-8"]).ask(request()))
        #expect(setup.commands("OPTION").contains("OPTION ttyname=/dev/pts/7"))
        #expect(setup.commands("OPTION").contains("OPTION ttytype=xterm-256color"))
        #expect(setup.commands("OPTION").contains("OPTION display=:1"))
        #expect(setup.commands("OPTION").contains("OPTION lc-ctype=de_DE.UTF-8"))

        let bare = try FakeSetup(answers: ["c"])
        _ = passwordBytes(bare.pinentry(["TTY": "/dev/tty3"]).ask(request()))
        #expect(bare.commands("OPTION") == ["OPTION ttyname=/dev/tty3"])
    }

    @Test("concurrent asks sharing one script each get a different answer")
    func concurrentAsks() async throws {
        let answers = (0..<6).map { "password \($0)" }
        let setup = try FakeSetup(answers: answers)
        let pinentry = setup.pinentry()
        let results = await withTaskGroup(of: [UInt8]?.self) { group in
            for _ in answers {
                group.addTask {
                    if case .password(let secret) = pinentry.ask(request()) {
                        return secret.unprotectedArray(0..<secret.count)
                    }
                    return nil
                }
            }
            var all: [[UInt8]?] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(Set(results.compactMap { $0 }) == Set(answers.map { Array($0.utf8) }))
        for pid in setup.pids { #expect(processIsGone(pid)) }
    }
}

@Suite("Pinentry program selection")
struct PinentryProgramTests {
    @Test("a program that does not exist gives .unavailable and no path")
    func missingProgram() {
        let pinentry = Pinentry(program: "/nonexistent")
        #expect(pinentry.programPath == nil)
        let text = unavailableText(pinentry.ask(request()))
        #expect(text?.contains("/nonexistent") == true, "got \(text ?? "nil")")

        let notInPath = Pinentry(program: "pinentry-does-not-exist", environment: ["PATH": "/usr/bin:/bin"])
        #expect(notInPath.programPath == nil)
        #expect(unavailableText(notInPath.ask(request())) != nil)
    }

    @Test("with no pinentry anywhere in PATH the answer says what to install")
    func noneInPath() throws {
        let setup = try FakeSetup(answers: nil)
        let pinentry = Pinentry(program: nil, environment: ["PATH": setup.directory, "GPG_TTY": "/dev/pts/9"])
        #expect(pinentry.programPath == nil)
        #expect(unavailableText(pinentry.ask(request())) == Pinentry.notFoundMessage)
        #expect(Pinentry.notFoundMessage.contains("--pinentry"))
    }

    @Test("names are looked up in the given PATH; the programs for the session are tried in order")
    func lookup() throws {
        let setup = try FakeSetup(answers: ["via path", "via default"])
        let bin = setup.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in ["FakePinentry", "pinentry-tty", "pinentry-curses", "pinentry"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: setup.fake)
        }
        // A directory and a non-executable file with earlier names are skipped.
        try FileManager.default.createDirectory(atPath: setup.directory + "/early/pinentry-gnome3",
                                                withIntermediateDirectories: true)
        try Data("not a program".utf8).write(to: URL(fileURLWithPath: setup.directory + "/early/pinentry-qt"))
        let path = setup.directory + "/early:" + bin

        let named = Pinentry(program: "FakePinentry", environment: setup.environment(["PATH": path]))
        #expect(named.programPath == bin + "/FakePinentry")
        #expect(passwordBytes(named.ask(request())) == Array("via path".utf8))

        // A display and a terminal: the graphical programs first (unusable here), then the terminal ones.
        let chosen = Pinentry(program: nil, environment: setup.environment(["PATH": path, "DISPLAY": ":9", "GPG_TTY": "/dev/null"]))
        #expect(chosen.programPath == bin + "/pinentry-curses")
        #expect(passwordBytes(chosen.ask(request())) == Array("via default".utf8))
    }

    @Test("a real pinentry without a terminal or display fails cleanly instead of hanging",
          .enabled(if: Executables.inPath("pinentry-curses") != nil, "pinentry-curses not installed"))
    func realPinentryWithoutTerminal() throws {
        let path = try #require(Executables.inPath("pinentry-curses"))
        let started = ContinuousClock.now
        // stdin is a pipe and no ttyname is given: pinentry-curses cannot open a terminal.
        let answer = Pinentry(program: path, environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(20))
            .ask(request())
        let text = unavailableText(answer)
        #expect(text != nil, "got \(answer)")
        #expect(ContinuousClock.now - started < .seconds(15))
    }
}
