import CofferTestSupport
import Foundation
import Testing

/// A read cofferd refuses says so, why, and what would allow it: to secret-tool (GetSecrets of
/// items that are all refused fails with AccessDenied instead of answering nothing), to coffer
/// (exit status 7, never "locked or deleted meanwhile"), and in cofferd's log (a grant or the
/// policy, never "coffer unlock"). The daemon is headless and `login` is `ask`, so another
/// application than an item's creator is refused.
@Suite(.timeLimit(.minutes(5))) struct RefusalTests {
    static let mine = ["--service", "refusal", "--account", "coffer"]

    /// Stores an item with secret-tool (its creator).
    static func storeWithSecretTool(_ daemon: CofferdFixture, account: String) throws {
        let tool = try #require(Executables.inPath("secret-tool"))
        let result = try ChildProcess(tool, arguments: ["store", "--label=Tool item", "service", "refusal", "account", account],
                                      environment: daemon.bus.environment(["HOME": daemon.cofferHome, "LANG": "C.UTF-8"]),
                                      stdin: Array("tool secret".utf8)).wait(timeout: 30)
        #expect(result.exitCode == 0, "secret-tool store: \(result)")
    }

    @Test func secretToolIsToldWhyWhenEverySecretIsRefused() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        try daemon.expect(0, ["add"] + Self.mine, stdin: "coffer secret\n")
        let lookup = try daemon.secretTool(["lookup", "service", "refusal", "account", "coffer"])
        #expect(lookup.exitCode == 1 && lookup.stdout.isEmpty, "\(lookup)")
        #expect(lookup.stderr.contains("Access denied: /usr/bin/secret-tool may not read item login/"), "\(lookup)")
        #expect(lookup.stderr.contains("coffer access grant exe:/usr/bin/secret-tool --collection login")
                && lookup.stderr.contains("coffer policy open --collection login"), "\(lookup)")
        // The log says what would allow it; unlocking would not.
        #expect(eventually { daemon.daemonLog.contains("coffer access grant exe:/usr/bin/secret-tool --collection login") },
                "\(daemon.daemonLog)")
        #expect(!daemon.daemonLog.contains("coffer unlock"), "\(daemon.daemonLog)")
    }

    @Test func cofferSaysItWasRefusedAndHowMany() throws {
        let daemon = try CofferdFixture()
        defer { daemon.shutdown() }
        try Self.storeWithSecretTool(daemon, account: "tool")
        let one = try daemon.expect(7, ["search", "--secret-only", "--service", "refusal"])
        #expect(one.stdout.isEmpty, "\(one)")
        #expect(one.stderr.hasPrefix("coffer: cofferd refused: Access denied: ")
                && one.stderr.contains("may not read item login/1")
                && one.stderr.contains("To allow it: coffer access grant "), "\(one)")
        #expect(!one.stderr.contains("meanwhile"), "\(one)")

        // One of its own and one of secret-tool's: the listing is refused whole, saying how many.
        try daemon.expect(0, ["add"] + Self.mine, stdin: "coffer secret\n")
        let listing = try daemon.expect(7, ["search", "--all", "--show-secret", "--service", "refusal"])
        #expect(listing.stdout.isEmpty, "\(listing)")
        #expect(listing.stderr.hasPrefix("coffer: cofferd refused 1 of the 2 secrets asked for: Access denied: ")
                && listing.stderr.contains("may not read item login/1"), "\(listing)")
        // Without the refused one, all is well.
        let own = try daemon.expect(0, ["search", "--secret-only"] + Self.mine)
        #expect(own.stdout == "coffer secret\n", "\(own)")

        // coffer is identified (it no longer hides its executable), so a grant to its binary works.
        try daemon.grant(try #require(Executables.built("coffer")))
        let granted = try daemon.expect(0, ["search", "--all", "--show-secret", "--json", "--service", "refusal"])
        #expect(granted.stdout.contains("tool secret") && granted.stdout.contains("coffer secret"), "\(granted)")
    }
}
