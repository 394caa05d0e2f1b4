import CofferCore
import CofferCrypto
import CofferTestSupport
import Foundation
import Testing

/// `coffer export --force` replaces the file it is given, in both formats; an export that
/// fails while writing leaves the file that was there as it was.
extension ExportTests {
    /// Exports collection `login` of `f` in `format` (passphrase "new phrase") to `file`.
    static func exportLogin(_ f: CLIFixture, format: String, to file: String, force: Bool) throws -> ChildResult {
        try f.run(["export", "--format", format, "--collection", "login", "--output", file, "--password-stdin"]
                  + (force ? ["--force"] : []),
                  stdin: "\(CLIFixture.password)\nnew phrase\n")
    }

    /// Label to secret of every item of collection `id` in the store of `f`.
    static func secrets(_ f: CLIFixture, of id: CollectionID, password: String) throws -> [String: [UInt8]] {
        let keychain = try store(f, unlocking: id, password: password)
        let matches = try keychain.search(Query(collection: id, returnAttributes: true))
        var secrets: [String: [UInt8]] = [:]
        try keychain.forEachSecret(of: matches.map(\.reference)) { position, secret in
            secrets[matches[position].metadata?.label ?? "?"] = secret.bytes.withUnprotectedCopy { $0 }
        }
        return secrets
    }

    /// The names in `directory`, sorted.
    static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test(arguments: ["coffer", "gnome-keyring"])
    func forceReplacesAnExistingFile(format: String) throws {
        let f = try Self.filled()
        let file = f.root + "/export"
        let old = Array("an older export\n".utf8)
        #expect(FileManager.default.createFile(atPath: file, contents: Data(old), attributes: [.posixPermissions: 0o644]))

        let refused = try Self.exportLogin(f, format: format, to: file, force: false)
        #expect(refused.status == 4 && refused.stderr.contains("--force"), "\(refused)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) == old)

        let replaced = try Self.exportLogin(f, format: format, to: file, force: true)
        #expect(replaced.status == 0 && replaced.stdout.contains("wrote 2 items of 'login'"), "\(replaced)")
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        #expect(try Self.names(in: f.root) == ["data", "export", "home"], "a temporary file was left behind")

        // What was written reads back: imported into an empty store, the same items.
        let other = try CLIFixture()
        let imported = format == "coffer"
            ? try other.run(["import", "backup", file, "--password-stdin"], stdin: "new phrase\nnew phrase\n")
            : try other.run(["import", "gnome-keyring", file, "--into", "login", "--password-stdin"], stdin: "new phrase\n")
        #expect(imported.status == 0 && imported.stdout.contains("imported 2 items"), "\(imported)")
        let exported = try Self.secrets(f, of: .login, password: CLIFixture.password)
        #expect(exported.count == 2)
        #expect(try Self.secrets(other, of: .login, password: "new phrase") == exported)
    }

    /// The export's writes stop at a file size limit (RLIMIT_FSIZE, as `prlimit --fsize` sets
    /// it; SIGXFSZ ignored, so that the write fails with EFBIG instead of killing coffer), part
    /// way into the new file.
    @Test(.enabled(if: Executables.inPath("prlimit") != nil, "prlimit (util-linux) is not installed"),
          arguments: ["coffer", "gnome-keyring"])
    func anExportThatFailsWhileWritingLeavesTheOldFile(format: String) throws {
        let f = try Self.filled()
        let file = f.root + "/export"
        let old = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(old), attributes: [.posixPermissions: 0o600]))

        let limited = try ChildProcess(
            "/bin/sh",
            arguments: ["-c", "trap '' XFSZ; exec prlimit --fsize=100 -- \"$@\"", "sh", CLIFixture.executable,
                        "--data-dir", f.dataDir, "export", "--format", format, "--collection", "login", "--output", file,
                        "--password-stdin", "--force"],
            environment: f.environment, stdin: Array("\(CLIFixture.password)\nnew phrase\n".utf8), newSession: true
        ).wait(timeout: 60)
        #expect(limited.status == 5, "\(limited)")
        #expect(limited.stderr.contains("cannot write \(file): File too large; nothing was written"), "\(limited)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) == old, "the old file changed")
        #expect(try Self.names(in: f.root) == ["data", "export", "home"], "a temporary file was left behind")
    }
}
