import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// The package scripts/package-deb built: $COFFER_DEB (scripts/test sets it), else where
/// scripts/package-deb puts it; nil when there is none or dpkg-deb is missing.
private let package: String? = {
    guard Executables.inPath("dpkg-deb") != nil,
          let arch = try? Repository.runNow("dpkg", ["--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
    let path = ProcessInfo.processInfo.environment["COFFER_DEB"]
        ?? "\(Repository.root)/.build/debian/coffer_\(CofferVersion.current)_\(arch).deb"
    return FileManager.default.fileExists(atPath: path) ? path : nil
}()

/// The Debian package: its control fields, its files, binaries that run without Swift,
/// lintian, and an installation with dpkg into a throw-away root.
@Suite(.serialized, .timeLimit(.minutes(5)),
       .enabled(if: package != nil, "no package built: run scripts/package-deb (scripts/test does)"))
struct DebianPackageTests {
    let deb = package!

    /// What a tool prints on stdout, expecting it to succeed (`environment`: as `Repository.run`).
    func output(_ tool: String, _ arguments: [String], environment: [String: String]? = nil,
                timeout: TimeInterval = 120) async throws -> String {
        let result = try await Repository.run(tool, arguments, environment: environment, timeout: timeout)
        #expect(result.succeeded, "\(result)")
        return result.stdout
    }

    func multiarch() async throws -> String {
        try await output("dpkg-architecture", ["-qDEB_HOST_MULTIARCH"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The control file's fields, by name.
    func fields() async throws -> [String: String] {
        var fields: [String: String] = [:]
        for line in try await output("dpkg-deb", ["--field", deb]).split(separator: "\n") where !line.hasPrefix(" ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    @Test("control fields: name, version from CofferVersion, architecture, computed dependencies")
    func control() async throws {
        let fields = try await fields()
        #expect(fields["Package"] == "coffer")
        #expect(fields["Version"] == CofferVersion.current)
        let arch = try await output("dpkg", ["--print-architecture"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fields["Architecture"] == arch)
        let depends = fields["Depends"] ?? ""
        for library in ["libc6", "libdbus-1-3", "libgcrypt20", "libpam0g", "dbus-session-bus"] {
            #expect(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        #expect(!depends.lowercased().contains("swift"))
        // The binaries' packed relocations (DT_RELR) need a loader that reads them: glibc 2.36.
        #expect(depends.contains("libc6 (>= 2.36)"), "Depends: \(depends)")
        #expect(fields["Recommends"]?.contains("pinentry") == true)
        #expect(fields["Maintainer"]?.contains("@") == true)
        #expect(fields["Description"]?.isEmpty == false)
        #expect(fields["Conflicts"] == nil && fields["Breaks"] == nil, "the package must install beside gnome-keyring")
    }

    @Test("files: binaries, unit, activation file, portal file, PAM module, man pages, completions, documents")
    func files() async throws {
        let listed = Set(try await output("dpkg-deb", ["--contents", deb]).split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ").last, !path.hasSuffix("/") else { return nil }
            return String(path.dropFirst())   // "./usr/bin/coffer" -> "/usr/bin/coffer"
        })
        let arch = try await multiarch()
        let expected: Set<String> = [
            "/usr/bin/cofferd", "/usr/bin/coffer", "/usr/libexec/coffer/cofferd-data-dir",
            "/usr/lib/systemd/user/cofferd.service", "/usr/share/coffer/org.freedesktop.secrets.service",
            "/usr/lib/\(arch)/security/pam_coffer.so",
            "/usr/share/man/man1/cofferd.1.gz", "/usr/share/man/man1/coffer.1.gz",
            "/usr/share/bash-completion/completions/cofferd", "/usr/share/bash-completion/completions/coffer",
            "/usr/share/zsh/vendor-completions/_cofferd", "/usr/share/zsh/vendor-completions/_coffer",
            "/usr/share/fish/vendor_completions.d/cofferd.fish", "/usr/share/fish/vendor_completions.d/coffer.fish",
            "/usr/share/xdg-desktop-portal/portals/coffer.portal",
            "/usr/share/doc/coffer/README.md.gz", "/usr/share/doc/coffer/copyright", "/usr/share/doc/coffer/changelog.gz",
        ]
        #expect(listed == expected)
        // gnome-keyring owns /usr/share/dbus-1/services/org.freedesktop.secrets.service.
        #expect(!listed.contains { $0.hasPrefix("/usr/share/dbus-1/") })
    }

    @Test("installed with dpkg into a throw-away root: the documents are right, the binaries need no Swift",
          .enabled(if: Executables.inPath("dpkg") != nil && Executables.inPath("readelf") != nil, "dpkg or readelf is missing"))
    func installed() async throws {
        let root = try Repository.temporaryDirectory("dpkg-root")
        defer { try? FileManager.default.removeItem(atPath: root) }
        for directory in ["info", "updates", "triggers"] {
            try FileManager.default.createDirectory(atPath: "\(root)/var/lib/dpkg/\(directory)", withIntermediateDirectories: true)
        }
        #expect(FileManager.default.createFile(atPath: "\(root)/var/lib/dpkg/status", contents: Data()), "the throw-away dpkg status file")
        // --force-depends: the throw-away root has no libc6 or libdbus-1-3 packages registered.
        // dpkg wants ldconfig and start-stop-daemon in its PATH, which are in /usr/sbin and /sbin.
        _ = try await output("dpkg", ["--root=\(root)", "--log=/dev/null", "--force-depends", "--force-not-root", "-i", deb],
                             environment: Executables.environmentWithSearchPath)

        for binary in ["/usr/bin/cofferd", "/usr/bin/coffer", "/usr/lib/\(try await multiarch())/security/pam_coffer.so"] {
            let ldd = try await output("ldd", [root + binary])
            #expect(!ldd.contains("not found"), "\(ldd)")
            #expect(!ldd.contains("libswift") && !ldd.contains("libFoundation") && !ldd.contains("libdispatch"),
                    "\(binary) links the Swift runtime dynamically: \(ldd)")
            let dynamic = try await output("readelf", ["-d", root + binary])
            #expect(!dynamic.contains("swift") && !dynamic.contains("/opt/"), "\(binary) has a toolchain RUNPATH: \(dynamic)")
        }
        // Nothing of the toolchain reachable: no PATH to it, no LD_LIBRARY_PATH.
        for binary in ["cofferd", "coffer"] {
            let run = try await Repository.run("\(root)/usr/bin/\(binary)", ["--version"], environment: ["PATH": "/usr/bin:/bin"])
            #expect(run.succeeded, "\(run)")
            #expect(run.stdout == CofferVersion.current + "\n")
        }
        // The tests' cheap key derivation is refused by what users install: nothing is created.
        let data = root + "/fast-kdf-data"
        for (binary, arguments) in [("cofferd", ["--foreground", "--data-dir", data]), ("coffer", ["--data-dir", data, "collections"])] {
            let run = try await Repository.run("\(root)/usr/bin/\(binary)", arguments,
                                               environment: ["PATH": "/usr/bin:/bin", "HOME": root].merging(TestEnvironment.fastKeyDerivation) { $1 })
            #expect(!run.succeeded && run.stderr.contains("COFFER_TEST_FAST_KDF is set"), "\(binary): \(run)")
            #expect(!FileManager.default.fileExists(atPath: data + "/login.coffer"))
        }
        // So is the tests' manual clock, which would let another program stretch every time limit.
        let clocked = try await Repository.run("\(root)/usr/bin/cofferd", ["--foreground", "--data-dir", data],
                                               environment: ["PATH": "/usr/bin:/bin", "HOME": root].merging(TestEnvironment.clock(at: 0)) { $1 })
        #expect(!clocked.succeeded && clocked.stderr.contains("COFFER_TEST_CLOCK is set"), "\(clocked)")
        #expect(!FileManager.default.fileExists(atPath: data + "/login.coffer"))

        let doc = "\(root)/usr/share/doc/coffer"
        let copyright = try String(contentsOfFile: doc + "/copyright", encoding: .utf8)
        #expect(copyright.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"))
        #expect(copyright.contains("Copyright: 2026 The Coffer developers\nLicense: MIT"))
        // The license's text, as in LICENSE (indented, blank lines as " .").
        let license = try Repository.text("LICENSE").split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("Permission") }
        for line in license where !line.isEmpty { #expect(copyright.contains(" " + line), "copyright lacks: \(line)") }
        let changelog = try await output("zcat", [doc + "/changelog.gz"])
        #expect(changelog.hasPrefix("coffer (\(CofferVersion.current)) "))
        let unit = try String(contentsOfFile: "\(root)/usr/lib/systemd/user/cofferd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/cofferd --foreground\n"))
    }

    @Test("lintian reports no errors", .enabled(if: Executables.inPath("lintian") != nil, "lintian is not installed"))
    func lintian() async throws {
        let result = try await Repository.run("lintian", ["--fail-on", "error", deb], timeout: 240)
        #expect(result.succeeded, "\(result)")
        #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("E: ") }, "\(result.stdout)")
    }
}
