import CofferTestSupport
import Foundation
import Testing

/// `coffer sync` and what `coffer doctor` says of syncing, against a running cofferd whose
/// `login` syncs with a second store (another machine) through a plain shared folder.
@Suite(.timeLimit(.minutes(3)))
struct SyncCommandTests {
    static let password = CofferdFixture.loginPassword

    @Test func doctorReportsADamagedDeviceFileAndAConflictingCopy() throws {
        let daemon = try CofferdFixture()
        try daemon.grant(try #require(Executables.inPath("secret-tool")))
        let (shared, folder, other) = try Self.syncWithAnotherMachine(daemon)
        try daemon.expect(0, ["--data-dir", other, "add", "--collection", "work", "--service", "from-other", "--password-stdin"],
                          stdin: "other pw\nsecret")
        try daemon.expect(0, ["--data-dir", other, "sync", "now", "--collection", "work", "--password-stdin"], stdin: "other pw\n")
        #expect(eventually(timeout: 20) { (try? daemon.secretTool(["lookup", "service", "from-other"]))?.stdout == "secret" })
        let status = try daemon.expect(0, ["sync", "status", "--data-dir", daemon.daemonDataDir]).stdout
        #expect(status.contains("synced through \(folder)") && status.contains("other machine: "), "\(status)")
        #expect(try Self.syncFindings(daemon).allSatisfy { $0.status == "ok" })

        // The other machine's file gets a record that does not open: set aside, reported.
        let otherFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { name in
            name.hasSuffix(".csync") && !status.contains("this machine: \(name.dropLast(6))")
        })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(otherFile)"))
        bytes += Data([40, 0, 0, 0]) + Data((0..<40).map { UInt8($0) })
        try bytes.write(to: URL(fileURLWithPath: "\(folder)/\(otherFile)"))
        #expect(eventually(timeout: 20) {
            (try? Self.syncFindings(daemon))?.contains { $0.status == "problem" && $0.finding.contains("set aside") } == true
        }, "\(daemon.daemonLog.split(separator: "\n").joined(separator: " | "))")
        // Reads and writes go on.
        #expect(try daemon.secretTool(["lookup", "service", "from-other"]).stdout == "secret")

        // A sync tool's conflicting copy: two machines under one id.
        try bytes.write(to: URL(fileURLWithPath: "\(folder)/\(otherFile.dropLast(6)).sync-conflict-20261129-000000-ABCDEFG.csync"))
        let findings = try Self.syncFindings(daemon)
        #expect(findings.contains { $0.status == "problem" && $0.finding.contains("conflicting copy") }, "\(findings)")
    }

    @Test func aMissingFolderStopsSyncingNotLocalWritesAndSyncingResumes() throws {
        let daemon = try CofferdFixture()
        try daemon.grant(try #require(Executables.inPath("secret-tool")))
        let (shared, _, other) = try Self.syncWithAnotherMachine(daemon)

        // The shared folder goes away (unmounted, moved): local writes go on, doctor says why
        // syncing stopped.
        try FileManager.default.moveItem(atPath: shared, toPath: shared + ".away")
        let stored = try daemon.secretTool(["store", "--label=while away", "service", "away"], stdin: "kept")
        #expect(stored.exitCode == 0)
        #expect(try daemon.secretTool(["lookup", "service", "away"]).stdout == "kept")
        #expect(eventually(timeout: 20) {
            (try? Self.syncFindings(daemon))?.contains { $0.status == "problem" && $0.finding.contains("missing") } == true
        })
        #expect(daemon.daemonLog.contains("syncing collection 'login' stopped"), "\(daemon.daemonLog)")

        // Back: what was written meanwhile goes out, and the other machine gets it.
        try FileManager.default.moveItem(atPath: shared + ".away", toPath: shared)
        #expect(eventually(timeout: 20) {
            guard let now = try? daemon.run(["--data-dir", other, "sync", "now", "--collection", "work", "--password-stdin"],
                                            stdin: "other pw\n"), now.status == 0 else { return false }
            let found = try? daemon.run(["--data-dir", other, "search", "--collection", "work", "--service", "away", "--secret-only",
                                         "--password-stdin"], stdin: "other pw\n")
            return found?.stdout == "kept\n" || found?.stdout == "kept"
        })
        #expect(try Self.syncFindings(daemon).allSatisfy { $0.status == "ok" })
    }

    /// The daemon's `login` synced through `<root>/shared`, joined by another machine's store
    /// (`<root>/other-machine`, its collection `work` with its own password "other pw").
    static func syncWithAnotherMachine(_ daemon: CofferdFixture) throws -> (shared: String, folder: String, other: String) {
        let shared = daemon.root + "/shared"
        let other = daemon.root + "/other-machine"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try daemon.expect(0, ["--data-dir", daemon.daemonDataDir, "sync", "enable", shared, "--collection", "login", "--password-stdin"],
                          stdin: password + "\n")
        let folder = shared + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: shared).first))
        try daemon.expect(0, ["--data-dir", other, "create-collection", "work", "--password-stdin"], stdin: "other pw\nother pw\n")
        try daemon.expect(0, ["--data-dir", other, "sync", "join", folder, "--collection", "work", "--password-stdin"],
                          stdin: "other pw\n\(password)\n")
        return (shared, folder, other)
    }

    /// `coffer doctor --json`'s findings of the sync check.
    static func syncFindings(_ daemon: CofferdFixture) throws -> [(status: String, finding: String)] {
        let result = try daemon.run(["doctor", "--json"])
        return try CLIFixture.jsonArray(result).compactMap { entry in
            guard entry["check"] as? String == "sync", let status = entry["status"] as? String,
                  let finding = entry["finding"] as? String else { return nil }
            return (status, finding)
        }
    }
}
