import CofferTestSupport
import Foundation
import Testing

/// `coffer slots` and `coffer recover`, run as a user runs them: a recovery key shown once
/// opens the collection and sets a new password; typing errors and wrong keys say so.
struct KeySlotCLITests {
    /// The recovery key in `add-recovery-key`'s output (8 groups of 4, joined by dashes).
    static func recoveryKey(in output: String) -> String? {
        output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { line in
            let groups = line.split(separator: "-", omittingEmptySubsequences: false)
            return groups.count == 8 && groups.allSatisfy { $0.count == 4 }
        }
    }

    /// Every byte of every file in the data directory.
    static func storeBytes(_ cli: CLIFixture) throws -> [UInt8] {
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.dataDir)
        return try names.flatMap { Array(try Data(contentsOf: URL(fileURLWithPath: cli.dataDir + "/" + $0))) }
    }

    @Test func aRecoveryKeyIsShownOnceAndSetsANewPassword() throws {
        let cli = try CLIFixture()
        try cli.createCollection("work")
        try cli.add(["--collection", "work", "--service", "mail"], secret: "kept")
        let listed = try cli.run(["slots", "--collection", "work"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("password") && !listed.stdout.contains("recovery"), "\(listed.stdout)")

        let added = try cli.run(["slots", "add-recovery-key", "--collection", "work", "--password-stdin"], stdin: cli.withPassword())
        #expect(added.status == 0, "\(added.stderr)")
        let key = try #require(Self.recoveryKey(in: added.stdout), "\(added.stdout)")
        #expect(added.stdout.contains("coffer recover --collection work"))
        #expect(try cli.run(["slots", "--collection", "work"]).stdout.contains("recovery key"))
        #expect(!(try Self.storeBytes(cli)).contains(bytes: Array(key.utf8)), "the recovery key is in a file")

        // Typed back in lower case, with spaces: the old password is replaced.
        let typed = key.lowercased().replacingOccurrences(of: "-", with: " ")
        let recovered = try cli.run(["recover", "--collection", "work", "--password-stdin"], stdin: "\(typed)\nnew password\n")
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try cli.run(["unlock", "work", "--password-stdin"], stdin: cli.withPassword()).status == 3)
        let read = try cli.run(["search", "--collection", "work", "--password-stdin", "--service", "mail", "--secret-only"],
                               stdin: cli.withPassword(password: "new password"))
        #expect(read.stdout == "kept\n", "\(read.stderr)")

        // Both changes of the ways in are in the audit log.
        let log = try cli.run(["log", "--json"])
        let events = try #require(try JSONSerialization.jsonObject(with: Data(log.stdoutBytes)) as? [[String: Any]], "\(log)")
        let details = events.filter { $0["action"] as? String == "keys" }.compactMap { $0["detail"] as? String }
        #expect(details == ["recovery key slot added", "new password set with the recovery key"], "\(events)")
    }

    @Test func aMistypedKeyIsCaughtAWrongOneIsRefusedAndThePasswordSlotStays() throws {
        let cli = try CLIFixture()
        try cli.createCollection("work")
        let first = try cli.run(["slots", "add-recovery-key", "--collection", "work", "--password-stdin"], stdin: cli.withPassword())
        let key = try #require(Self.recoveryKey(in: first.stdout))
        // A second key, removed again: well formed, and it opens nothing any more.
        let second = try cli.run(["slots", "add-recovery-key", "--collection", "work", "--password-stdin"], stdin: cli.withPassword())
        let removedKey = try #require(Self.recoveryKey(in: second.stdout))
        let removal = try cli.run(["slots", "remove", "3", "--collection", "work", "--password-stdin"], stdin: cli.withPassword())
        #expect(removal.status == 0, "\(removal.stderr)")

        var mistyped = Array(key)
        mistyped[5] = mistyped[5] == "A" ? "B" : "A"
        let typo = try cli.run(["recover", "--collection", "work", "--password-stdin"], stdin: "\(String(mistyped))\nnew password\n")
        #expect(typo.status == 2 && typo.stderr.contains("character is wrong"), "\(typo.stderr)")
        let wrong = try cli.run(["recover", "--collection", "work", "--password-stdin"], stdin: "\(removedKey)\nnew password\n")
        #expect(wrong.status == 3 && wrong.stderr.contains("not the recovery key"), "\(wrong.stderr)")

        let passwordSlot = try cli.run(["slots", "remove", "1", "--collection", "work", "--password-stdin"], stdin: cli.withPassword())
        #expect(passwordSlot.status == 2 && passwordSlot.stderr.contains("coffer passwd"), "\(passwordSlot.stderr)")
        let wrongPassword = try cli.run(["slots", "add-recovery-key", "--collection", "work", "--password-stdin"],
                                        stdin: cli.withPassword(password: "not it"))
        #expect(wrongPassword.status == 3 && Self.recoveryKey(in: wrongPassword.stdout) == nil, "\(wrongPassword)")
        let slots = try cli.run(["slots", "--collection", "work"]).stdout
        #expect(slots.split(separator: "\n").count == 3, "\(slots)")   // the header, the password, the first key
        // The wrong key above counted: the right password waits out the throttle, then works.
        let unlock = try cli.run(["unlock", "work", "--password-stdin"], stdin: cli.withPassword())
        #expect(unlock.status == 0, "\(unlock.stderr)")
    }

    /// `coffer slots add-tpm` and `coffer unlock --tpm` without a daemon, with a real swtpm: a
    /// slot with a PIN, PCR-bound, and what another machine's TPM says.
    @Test(.enabled(if: SoftwareTPM.executable != nil, "swtpm is not installed"))
    func aTPMSlotIsAddedListedAndOpensWithItsPIN() throws {
        let tpm = try SoftwareTPM()
        let cli = try CLIFixture()
        cli.extraEnvironment = tpm.environment()
        try cli.createCollection("work")
        let refused = try cli.run(["slots", "add-tpm", "--collection", "work", "--pcrs", "7,24", "--password-stdin"], stdin: cli.withPassword())
        #expect(refused.status == 2 && refused.stderr.contains("0 to 23"), "\(refused.stderr)")
        let added = try cli.run(["slots", "add-tpm", "--collection", "work", "--pcrs", "16", "--pin", "--password-stdin"],
                                stdin: cli.withPassword("246813\n"))
        #expect(added.status == 0 && added.stdout.contains("unlock --tpm --pin"), "\(added)")
        #expect(try cli.run(["slots", "--collection", "work"]).stdout.contains("TPM (PCRs 16, PIN)"))
        // One PIN slot per collection (each PIN offered would count against every one), of
        // at least 6 characters.
        let second = try cli.run(["slots", "add-tpm", "--collection", "work", "--pin", "--password-stdin"], stdin: cli.withPassword("97531086\n"))
        #expect(second.status == 2 && second.stderr.contains("remove it first"), "\(second.stderr)")
        try #require(try cli.run(["slots", "remove", "2", "--collection", "work", "--password-stdin"], stdin: cli.withPassword()).status == 0)
        let short = try cli.run(["slots", "add-tpm", "--collection", "work", "--pin", "--password-stdin"], stdin: cli.withPassword("1234\n"))
        #expect(short.status == 2 && short.stderr.contains("at least 6"), "\(short.stderr)")
        let again = try cli.run(["slots", "add-tpm", "--collection", "work", "--pcrs", "16", "--pin", "--password-stdin"],
                                stdin: cli.withPassword("246813\n"))
        #expect(again.status == 0, "\(again.stderr)")

        let opened = try cli.run(["unlock", "--tpm", "--pin", "--collection", "work", "--password-stdin"], stdin: "246813\n")
        #expect(opened.status == 0, "\(opened.stderr)")
        let wrong = try cli.run(["unlock", "--tpm", "--pin", "--collection", "work", "--password-stdin"], stdin: "135724\n")
        #expect(wrong.status == 3 && wrong.stderr.contains("wrong TPM PIN"), "\(wrong.stderr)")
        let noPIN = try cli.run(["unlock", "--tpm", "--collection", "work"])
        #expect(noPIN.status == 2 && noPIN.stderr.contains("needs its PIN"), "\(noPIN.stderr)")

        // Another machine's TPM: refused with the reason, status 3, not counted as a guess.
        let other = try SoftwareTPM()
        cli.extraEnvironment = other.environment()
        let elsewhere = try cli.run(["unlock", "--tpm", "--pin", "--collection", "work", "--password-stdin"], stdin: "246813\n")
        #expect(elsewhere.status == 3 && elsewhere.stderr.contains("another TPM"), "\(elsewhere.stderr)")
    }
}
