import CofferTestSupport
import Foundation
import Testing

/// packaging/cofferd.service.in: its sandbox applies in a user unit, lets the data directory
/// script and cofferd work, and stays hardened (systemd-analyze), with every remaining
/// exposure explained in the unit.
@Suite struct UserUnitTests {
    static let template = "packaging/cofferd.service.in"

    /// The unit's settings (key, value) in order, comments left out.
    func settings() throws -> [(key: String, value: String)] {
        try Repository.text(Self.template).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    func values(_ key: String) throws -> [String] { try settings().filter { $0.key == key }.map(\.value) }

    @Test("the file system sandbox is switched on where a user unit needs it, PrivateUsers=yes")
    func privateUsers() throws {
        let namespaces = ["ProtectSystem", "ProtectHome", "PrivateTmp", "ReadWritePaths", "PrivateDevices", "PrivateNetwork"]
        #expect(try settings().contains { namespaces.contains($0.key) })
        #expect(try values("PrivateUsers") == ["yes"])
    }

    @Test("the data directory is prepared outside the sandbox and is the one path made writable")
    func dataDirectory() throws {
        #expect(try values("ExecStartPre") == ["+@libexecdir@/coffer/cofferd-data-dir"])
        #expect(try values("RuntimeDirectory") == ["coffer"])
        #expect(try values("ReadWritePaths") == ["%t/coffer/data"])
        // The script links $XDG_RUNTIME_DIR/coffer/data (%t/coffer/data in the unit).
        #expect(try Repository.text("packaging/cofferd-data-dir").contains("\"$XDG_RUNTIME_DIR/coffer/data\""))
        #expect(try values("LimitMEMLOCK") == ["8M"], "room for the 4 MiB secure memory pool")
    }

    @Test("systemd-analyze security --user: exposure 3.0 or lower, as the unit says, each one explained",
          .enabled(if: Executables.inPath("systemd-analyze") != nil, "systemd-analyze is not installed"))
    func exposure() async throws {
        let directory = try Repository.temporaryDirectory("unit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let template = try Repository.text(Self.template)
        try template.replacingOccurrences(of: "@bindir@", with: "/usr/bin")
            .replacingOccurrences(of: "@libexecdir@", with: "/usr/libexec")
            .write(toFile: directory + "/cofferd.service", atomically: true, encoding: .utf8)
        // As root, --user needs a runtime directory to resolve %t.
        let result = try await Repository.run("systemd-analyze", ["security", "--offline=true", "--user", directory + "/cofferd.service"],
                                        environment: ["PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": directory])
        #expect(result.succeeded, "\(result)")
        let overall = try #require(result.stdout.firstMatch(of: /Overall exposure level for cofferd.service: (\d+\.\d+)/),
                                   "\(result)")
        let measured = try #require(Double(overall.1))
        #expect(measured <= 3.0)
        #expect(template.contains("exposure \(overall.1) ("), "the unit's header states another exposure than \(overall.1)")

        let comments = template.split(separator: "\n").filter { $0.hasPrefix("#") }.joined(separator: "\n")
        let remaining = result.stdout.split(separator: "\n").filter { $0.hasPrefix("✗") }
        #expect(!remaining.isEmpty)
        for line in remaining {
            let setting = String(line.dropFirst().split(separator: " ").first ?? "")
            #expect(comments.contains(setting), "no comment in the unit explains \(setting)")
        }
    }
}
