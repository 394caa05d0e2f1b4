import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// The package scripts/package-deb built: $COFFER_DEB (scripts/test sets it), else where
/// scripts/package-deb puts it; nil when there is none or dpkg-deb is missing.
private let package: String? = {
    guard Executables.inPath("dpkg-deb") != nil,
          let arch = try? Repository.run("dpkg", ["--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
    let path = ProcessInfo.processInfo.environment["COFFER_DEB"]
        ?? "\(Repository.root)/.build/debian/coffer_\(CofferVersion.current)_\(arch).deb"
    return FileManager.default.fileExists(atPath: path) ? path : nil
}()

/// The Debian package: its control fields, its files, binaries that run without Swift,
/// lintian, and an installation with dpkg into a throw-away root.
@Suite(.timeLimit(.minutes(5)),
       .enabled(if: package != nil, "no package built: run scripts/package-deb (scripts/test does)"))
struct DebianPackageTests {
    let deb = package!

    func dpkgDeb(_ arguments: [String]) throws -> String {
        let result = try Repository.run("dpkg-deb", arguments + [deb])
        #expect(result.succeeded, "\(result)")
        return result.stdout
    }

    func field(_ name: String) throws -> String {
        try dpkgDeb(["--field"]).split(separator: "\n").first { $0.hasPrefix(name + ": ") }
            .map { String($0.dropFirst(name.count + 2)) } ?? ""
    }

    @Test("control fields: name, version from CofferVersion, architecture, computed dependencies")
    func control() throws {
        #expect(try field("Package") == "coffer")
        #expect(try field("Version") == CofferVersion.current)
        let arch = try Repository.run("dpkg", ["--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try field("Architecture") == arch)
        let depends = try field("Depends")
        for library in ["libc6", "libdbus-1-3", "libgcrypt20", "libpam0g", "dbus-session-bus"] {
            #expect(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        #expect(!depends.lowercased().contains("swift"))
        #expect(try field("Recommends").contains("pinentry"))
        #expect(try field("Maintainer").contains("@"))
        #expect(try !field("Description").isEmpty)
        #expect(try !dpkgDeb(["--field"]).contains("Conflicts"), "the package must install beside gnome-keyring")
    }

    @Test("files: binaries, unit, activation file, PAM module, man pages, completions, documents")
    func files() throws {
        let listed = Set(try dpkgDeb(["--contents"]).split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ").last, !path.hasSuffix("/") else { return nil }
            return String(path.dropFirst())   // "./usr/bin/coffer" -> "/usr/bin/coffer"
        })
        let arch = try multiarch()
        let expected: Set<String> = [
            "/usr/bin/cofferd", "/usr/bin/coffer", "/usr/libexec/coffer/cofferd-data-dir",
            "/usr/lib/systemd/user/cofferd.service", "/usr/share/coffer/org.freedesktop.secrets.service",
            "/usr/lib/\(arch)/security/pam_coffer.so",
            "/usr/share/man/man1/cofferd.1.gz", "/usr/share/man/man1/coffer.1.gz",
            "/usr/share/bash-completion/completions/cofferd", "/usr/share/bash-completion/completions/coffer",
            "/usr/share/zsh/vendor-completions/_cofferd", "/usr/share/zsh/vendor-completions/_coffer",
            "/usr/share/fish/vendor_completions.d/cofferd.fish", "/usr/share/fish/vendor_completions.d/coffer.fish",
            "/usr/share/doc/coffer/README.md.gz", "/usr/share/doc/coffer/copyright", "/usr/share/doc/coffer/changelog.gz",
        ]
        #expect(listed == expected)
        // gnome-keyring owns /usr/share/dbus-1/services/org.freedesktop.secrets.service.
        #expect(!listed.contains { $0.hasPrefix("/usr/share/dbus-1/") || $0.hasSuffix(".portal") })
    }

    @Test("installed with dpkg into a throw-away root: the documents are right, the binaries need no Swift",
          .enabled(if: Executables.inPath("dpkg") != nil && Executables.inPath("readelf") != nil, "dpkg or readelf is missing"))
    func installed() throws {
        let root = try Repository.temporaryDirectory("dpkg-root")
        defer { try? FileManager.default.removeItem(atPath: root) }
        for directory in ["info", "updates", "triggers"] {
            try FileManager.default.createDirectory(atPath: "\(root)/var/lib/dpkg/\(directory)", withIntermediateDirectories: true)
        }
        FileManager.default.createFile(atPath: "\(root)/var/lib/dpkg/status", contents: Data())
        // --force-depends: the throw-away root has no libc6 or libdbus-1-3 packages registered.
        let install = try Repository.run("dpkg", ["--root=\(root)", "--log=/dev/null", "--force-depends", "--force-not-root", "-i", deb])
        #expect(install.succeeded, "\(install)")

        for binary in ["/usr/bin/cofferd", "/usr/bin/coffer", "/usr/lib/\(try multiarch())/security/pam_coffer.so"] {
            let ldd = try Repository.run("ldd", [root + binary])
            #expect(ldd.succeeded && !ldd.stdout.contains("not found"), "\(ldd)")
            #expect(!ldd.stdout.contains("libswift") && !ldd.stdout.contains("libFoundation") && !ldd.stdout.contains("libdispatch"),
                    "\(binary) links the Swift runtime dynamically: \(ldd.stdout)")
            let dynamic = try Repository.run("readelf", ["-d", root + binary]).stdout
            #expect(!dynamic.contains("swift") && !dynamic.contains("/opt/"), "\(binary) has a toolchain RUNPATH: \(dynamic)")
        }
        // Nothing of the toolchain reachable: no PATH to it, no LD_LIBRARY_PATH.
        for binary in ["cofferd", "coffer"] {
            let run = try Repository.run("\(root)/usr/bin/\(binary)", ["--version"], environment: ["PATH": "/usr/bin:/bin"])
            #expect(run.succeeded, "\(run)")
            #expect(run.stdout == CofferVersion.current + "\n")
        }

        let doc = "\(root)/usr/share/doc/coffer"
        let copyright = try String(contentsOfFile: doc + "/copyright", encoding: .utf8)
        #expect(copyright.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"))
        #expect(copyright.contains("Copyright: 2026 The Coffer developers\nLicense: MIT"))
        // The license's text, as in LICENSE (indented, blank lines as " .").
        let license = try Repository.text("LICENSE").split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("Permission") }
        for line in license where !line.isEmpty { #expect(copyright.contains(" " + line), "copyright lacks: \(line)") }
        let changelog = try Repository.run("zcat", [doc + "/changelog.gz"]).stdout
        #expect(changelog.hasPrefix("coffer (\(CofferVersion.current)) "))
        let unit = try String(contentsOfFile: "\(root)/usr/lib/systemd/user/cofferd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/cofferd --foreground\n"))
    }

    @Test("lintian reports no errors", .enabled(if: Executables.inPath("lintian") != nil, "lintian is not installed"))
    func lintian() throws {
        let result = try Repository.run("lintian", ["--fail-on", "error", deb], timeout: 240)
        #expect(result.succeeded, "\(result)")
        #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("E: ") }, "\(result.stdout)")
    }

    func multiarch() throws -> String {
        try Repository.run("dpkg-architecture", ["-qDEB_HOST_MULTIARCH"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
