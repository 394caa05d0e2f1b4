import CofferCore
import Foundation
@testable import SecretService
import Testing

/// Which pinentry cofferd runs depends on where the user can be reached.
struct PinentryChoiceTests {
    /// A directory with executables of these names.
    static func programs(_ names: [String]) throws -> String {
        let directory = NSTemporaryDirectory() + "pinentries-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in names {
            let path = directory + "/" + name
            try "#!/bin/sh\nexit 1\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        return directory
    }

    @Test func aDisplayGetsAGraphicalOneAndATerminalATerminalOne() throws {
        let all = try Self.programs(["pinentry-gnome3", "pinentry-curses", "pinentry"])
        defer { try? FileManager.default.removeItem(atPath: all) }
        func chosen(_ environment: [String: String]) -> String? {
            Pinentry(program: nil, environment: environment.merging(["PATH": all]) { a, _ in a }).programPath
                .map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        #expect(chosen(["DISPLAY": ":0"]) == "pinentry-gnome3")
        #expect(chosen(["WAYLAND_DISPLAY": "wayland-0", "GPG_TTY": "/dev/pts/1"]) == "pinentry-gnome3")
        #expect(chosen(["GPG_TTY": "/dev/pts/1"]) == "pinentry-curses")
        #expect(chosen(["DISPLAY": ""]) == nil)

        let generic = try Self.programs(["pinentry"])
        defer { try? FileManager.default.removeItem(atPath: generic) }
        #expect(Pinentry(program: nil, environment: ["PATH": generic, "GPG_TTY": "/dev/pts/1"]).programPath == generic + "/pinentry")
    }

    /// Nowhere to show a prompt: never a silent dismissal, the reason and the fix are said.
    @Test func nowhereToAskSaysWhatToSet() throws {
        let all = try Self.programs(["pinentry-gnome3", "pinentry-curses"])
        defer { try? FileManager.default.removeItem(atPath: all) }
        let pinentry = Pinentry(program: nil, environment: ["PATH": all])
        #expect(pinentry.programPath == nil)
        guard case .unavailable(let why) = pinentry.ask(PasswordRequest(title: "t", description: "d")) else {
            Issue.record("a prompt with nowhere to go was not reported as unavailable")
            return
        }
        #expect(why.contains("DISPLAY") && why.contains("GPG_TTY"), "\(why)")
    }
}
