import CofferTestSupport
import Foundation
import Testing

/// Whether scripts/build-release's output is current, so that `make install` copies files
/// without building (a build inside `swift test` would wait for the build lock forever).
private let releaseIsCurrent: Bool = {
    guard Executables.inPath("make") != nil,
          let result = try? Repository.runNow("make", ["-q", ".build/coffer-release/stamp"]) else { return false }
    return result.succeeded
}()

/// `make install` with PREFIX and DESTDIR: where each file goes for a system prefix, for
/// /usr (beside gnome-keyring) and for ~/.local, and that `make uninstall` takes it all back.
@Suite(.serialized, .timeLimit(.minutes(5)),
       .enabled(if: releaseIsCurrent, "the release build is missing or out of date: run scripts/build-release (scripts/test does)"))
struct MakeInstallTests {
    /// Runs `make install` (or another target) into a new DESTDIR; returns the DESTDIR and the
    /// files installed, as absolute paths without it.
    func install(_ variables: [String], target: String = "install", home: String = "/home/someone",
                 into destination: String? = nil) async throws -> (destdir: String, files: Set<String>) {
        let destdir = try destination ?? Repository.temporaryDirectory("destdir")
        let result = try await Repository.run("make", ["--no-print-directory", target, "DESTDIR=\(destdir)"] + variables,
                                        environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                                                      "HOME": home])
        #expect(result.succeeded, "\(result)")
        var files = Set<String>()
        let walker = FileManager.default.enumerator(atPath: destdir)
        while let path = walker?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: destdir + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.insert("/" + path)
            }
        }
        return (destdir, files)
    }

    /// The value of `key=` in an installed unit or activation file.
    func value(_ key: String, in file: String) throws -> String? {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    /// Everything any prefix gets, under `prefix`.
    func common(_ prefix: String, zsh: String = "share/zsh/site-functions") -> Set<String> {
        Set(["bin/cofferd", "bin/coffer", "libexec/coffer/cofferd-data-dir",
             "share/man/man1/cofferd.1", "share/man/man1/coffer.1",
             "share/bash-completion/completions/cofferd", "share/bash-completion/completions/coffer",
             "\(zsh)/_cofferd", "\(zsh)/_coffer",
             "share/fish/vendor_completions.d/cofferd.fish", "share/fish/vendor_completions.d/coffer.fish",
             "share/xdg-desktop-portal/portals/coffer.portal",
             "share/doc/coffer/README.md", "share/doc/coffer/LICENSE"].map { prefix + "/" + $0 })
    }

    /// The unit and the activation file start the installed cofferd, which is there.
    func expectExecPaths(destdir: String, unit: String, activation: String, prefix: String) throws {
        #expect(try value("ExecStart", in: destdir + unit) == "\(prefix)/bin/cofferd --foreground")
        #expect(try value("ExecStartPre", in: destdir + unit) == "+\(prefix)/libexec/coffer/cofferd-data-dir")
        #expect(try value("Exec", in: destdir + activation) == "\(prefix)/bin/cofferd --foreground")
        #expect(try value("SystemdService", in: destdir + activation) == "cofferd.service")
        #expect(FileManager.default.isExecutableFile(atPath: destdir + prefix + "/bin/cofferd"))
        #expect(FileManager.default.isExecutableFile(atPath: destdir + prefix + "/libexec/coffer/cofferd-data-dir"))
    }

    @Test("PREFIX=/usr: units in lib/systemd/user, the activation file beside (not over) gnome-keyring's")
    func usr() async throws {
        let multiarch = "x86_64-linux-gnu"
        let (destdir, files) = try await install(["PREFIX=/usr", "MULTIARCH=\(multiarch)"])
        defer { try? FileManager.default.removeItem(atPath: destdir) }
        let unit = "/usr/lib/systemd/user/cofferd.service", activation = "/usr/share/coffer/org.freedesktop.secrets.service"
        #expect(files == common("/usr").union([unit, activation, "/usr/lib/\(multiarch)/security/pam_coffer.so"]))
        try expectExecPaths(destdir: destdir, unit: unit, activation: activation, prefix: "/usr")
        // The Secret portal's backend: whoever owns org.freedesktop.secrets, on every desktop
        // whose portals.conf chooses it (no UseIn).
        let portal = destdir + "/usr/share/xdg-desktop-portal/portals/coffer.portal"
        #expect(try value("DBusName", in: portal) == "org.freedesktop.secrets")
        #expect(try value("Interfaces", in: portal) == "org.freedesktop.impl.portal.Secret")
        #expect(try value("UseIn", in: portal) == nil)
        #expect(try String(contentsOfFile: portal, encoding: .utf8).hasPrefix("[portal]\n"))
    }

    @Test("PREFIX=/usr/local: the activation file where the session bus looks; the PAM module in lib/security")
    func usrLocal() async throws {
        let (destdir, files) = try await install(["PREFIX=/usr/local"])
        defer { try? FileManager.default.removeItem(atPath: destdir) }
        let unit = "/usr/local/lib/systemd/user/cofferd.service"
        let activation = "/usr/local/share/dbus-1/services/org.freedesktop.secrets.service"
        #expect(files == common("/usr/local").union([unit, activation, "/usr/local/lib/security/pam_coffer.so"]))
        try expectExecPaths(destdir: destdir, unit: unit, activation: activation, prefix: "/usr/local")
    }

    @Test("PREFIX=~/.local: the unit in share/systemd/user, no PAM module; uninstall removes every file",
          arguments: ["/home/someone/.local", "~/.local"])
    func homeLocal(given: String) async throws {
        let home = "/home/someone", prefix = "/home/someone/.local"
        let (destdir, files) = try await install(["PREFIX=\(given)"], home: home)
        defer { try? FileManager.default.removeItem(atPath: destdir) }
        let unit = prefix + "/share/systemd/user/cofferd.service"
        let activation = prefix + "/share/dbus-1/services/org.freedesktop.secrets.service"
        #expect(files == common(prefix).union([unit, activation]))
        try expectExecPaths(destdir: destdir, unit: unit, activation: activation, prefix: prefix)

        let (_, left) = try await install(["PREFIX=\(given)"], target: "uninstall", home: home, into: destdir)
        #expect(left.isEmpty, "left after make uninstall: \(left.sorted())")
    }

    @Test("the man pages and completions are generated from the commands")
    func manPagesAndCompletions() async throws {
        let (destdir, _) = try await install(["PREFIX=/usr/local"])
        defer { try? FileManager.default.removeItem(atPath: destdir) }
        let share = destdir + "/usr/local/share"
        for command in ["cofferd", "coffer"] {
            let page = try String(contentsOfFile: "\(share)/man/man1/\(command).1", encoding: .utf8)
            #expect(page.contains(".Dt \(command.uppercased()) 1"))
            #expect(page.contains(".Nm \(command)"))
            #expect(!page.contains("\n\n"), "blank lines in \(command).1 (groff warns; .Pp is used instead)")
            let bash = try String(contentsOfFile: "\(share)/bash-completion/completions/\(command)", encoding: .utf8)
            #expect(bash.contains("complete ") && !bash.hasPrefix("#!"))
            let zsh = try String(contentsOfFile: "\(share)/zsh/site-functions/_\(command)", encoding: .utf8)
            #expect(zsh.hasPrefix("#compdef \(command)"))
            let fish = try String(contentsOfFile: "\(share)/fish/vendor_completions.d/\(command).fish", encoding: .utf8)
            #expect(fish.contains("complete -c '\(command)'") || fish.contains("complete -c \(command)"))
        }
        // coffer's subcommands are in its page and its completions.
        #expect(try String(contentsOfFile: "\(share)/man/man1/coffer.1", encoding: .utf8).contains("create-collection"))
        #expect(try String(contentsOfFile: "\(share)/bash-completion/completions/coffer", encoding: .utf8).contains("create-collection"))
    }
}
