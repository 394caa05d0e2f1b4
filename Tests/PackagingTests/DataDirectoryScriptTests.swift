import CofferStore
import Foundation
import Testing

/// packaging/cofferd-data-dir, which the user unit runs before its sandbox applies: it must
/// create the directory cofferd will use (FileStore's rule) on a fresh account, and link it
/// where the unit's ReadWritePaths= points.
@Suite struct DataDirectoryScriptTests {
    /// Runs the script with `environment` (HOME and XDG_RUNTIME_DIR under `home`), and returns
    /// where the link points and the directory cofferd would choose in the same environment.
    func prepare(home: String, _ extra: [String: String]) async throws -> (linked: String, expected: String) {
        var environment = ["HOME": home, "XDG_RUNTIME_DIR": home + "/run", "PATH": "/usr/bin:/bin"]
        environment.merge(extra) { $1 }
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true)
        let result = try await Repository.run(Repository.root + "/packaging/cofferd-data-dir", [], environment: environment)
        #expect(result.succeeded, "\(result)")
        let linked = try FileManager.default.destinationOfSymbolicLink(atPath: home + "/run/coffer/data")
        return (linked, FileStore.defaultDirectory(environment: environment))
    }

    @Test("a fresh account: ~/.local/share/coffer is created with mode 0700 and linked",
          arguments: [[:], ["XDG_DATA_HOME": ""], ["XDG_DATA_HOME": "relative/not/used"]])
    func freshAccount(extra: [String: String]) async throws {
        let home = try Repository.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let (linked, expected) = try await prepare(home: home, extra)
        #expect(linked == home + "/.local/share/coffer")
        #expect(linked == expected)
        let mode = try FileManager.default.attributesOfItem(atPath: linked)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test("XDG_DATA_HOME and COFFER_DATA_DIR are honoured as cofferd honours them")
    func overrides() async throws {
        let home = try Repository.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let xdg = try await prepare(home: home, ["XDG_DATA_HOME": home + "/data"])
        #expect(xdg.linked == home + "/data/coffer")
        #expect(xdg.linked == xdg.expected)
        let explicit = try await prepare(home: home, ["XDG_DATA_HOME": home + "/data", "COFFER_DATA_DIR": home + "/mine"])
        #expect(explicit.linked == home + "/mine")
        #expect(explicit.linked == explicit.expected)
        #expect(FileManager.default.fileExists(atPath: home + "/mine"))
    }

    @Test("an existing data directory keeps its contents and mode")
    func existingDirectory() async throws {
        let home = try Repository.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let data = home + "/.local/share/coffer"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o750])
        try "kept".write(toFile: data + "/login.coffer", atomically: true, encoding: .utf8)
        _ = try await prepare(home: home, [:])
        #expect(try String(contentsOfFile: data + "/login.coffer", encoding: .utf8) == "kept")
        #expect(try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions] as? Int == 0o750)
    }
}
