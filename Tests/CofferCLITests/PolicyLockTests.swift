import CofferTestSupport
import Foundation
import Testing

/// `coffer policy --lock-after-idle …`: when collections lock by themselves, written to the
/// settings file (no password), shown by `coffer policy`.
@Suite(.timeLimit(.minutes(5))) struct PolicyLockTests {
    func settings(_ f: CLIFixture) -> String? {
        try? String(contentsOfFile: f.home + "/.config/coffer/coffer.conf", encoding: .utf8)
    }

    @Test func changesGoToTheSettingsFileOneCollectionOrEvery() throws {
        let f = try CLIFixture()
        try f.createCollection("login")
        try f.createCollection("work")
        let one = try f.run(["policy", "--lock-after-idle", "30m", "--lock-on-screen-lock", "no"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("collection 'login' now:") && one.stdout.contains("locks after 30m without use")
                && one.stdout.contains("locks when the screen locks: no"), "\(one.stdout)")
        let every = try f.run(["policy", "--every-collection", "--lock-on-suspend", "no", "--fingerprint-window", "never"])
        #expect(every.status == 0, "\(every.stderr)")
        let work = try f.run(["policy", "--collection", "work", "--lock-after-idle", "never"])
        #expect(work.status == 0, "\(work.stderr)")
        #expect(settings(f) == """
        [collection login]
        lock-after-idle = 30m
        lock-on-screen-lock = no

        [every collection]
        lock-on-suspend = no
        fingerprint-window = never

        [collection work]
        lock-after-idle = never

        """)
        let mode = try FileManager.default.attributesOfItem(atPath: f.home + "/.config/coffer/coffer.conf")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // Shown with the access policy (which needs the password).
        let shown = try f.run(["policy", "--collection", "work", "--password-stdin"], stdin: f.withPassword())
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("locks after never (no idle time limit) without use")
                && shown.stdout.contains("locks before suspend and hibernate: no")
                && shown.stdout.contains("fingerprint unlock within never (only the password unlocks)"), "\(shown.stdout)")
    }

    @Test(arguments: [["--lock-after-idle", "soon"], ["--lock-on-suspend", "maybe"], ["--fingerprint-window", "-1h"],
                      ["--every-collection"], ["--every-collection", "--collection", "login", "--lock-after-idle", "1h"],
                      ["--lock-after-idle", "1h", "--collection", "nowhere"]])
    func badValuesChangeNothing(arguments: [String]) throws {
        let f = try CLIFixture()
        try f.createCollection("login")
        _ = try f.run(["policy", "--lock-after-idle", "2h"])
        let before = settings(f)
        let result = try f.run(["policy"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.hasPrefix("coffer: ") || result.stderr.contains("Error:"), "\(result.stderr)")
        #expect(settings(f) == before)
    }
}
