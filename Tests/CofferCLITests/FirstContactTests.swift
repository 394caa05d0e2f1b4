import CofferTestSupport
import Foundation
import Testing

/// What a newcomer meets first: `coffer` alone, and a mistyped command.
@Suite(.timeLimit(.minutes(5))) struct FirstContactTests {
    static let commands = ["add", "search", "update", "delete", "collections", "create-collection", "delete-collection",
                           "lock", "unlock", "passwd", "alias", "import", "export"]

    @Test func noArgumentsPrintsAShortUsage() throws {
        let cli = try CLIFixture()
        for arguments in [[], ["--data-dir", cli.dataDir]] {
            let result = try CLIFixture.runCoffer(arguments, environment: cli.environment)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count <= 10, "not short: \(result.stderr)")
            #expect(lines.allSatisfy { $0.count <= 80 })
            #expect(result.stderr.contains("usage: coffer [--data-dir DIR] COMMAND [OPTIONS]"))
            #expect(result.stderr.contains("coffer help COMMAND") && result.stderr.contains("coffer --help"))
            let listed = result.stderr.replacingOccurrences(of: "\n", with: " ")
            for command in Self.commands {
                #expect(listed.contains(" \(command),") || listed.hasSuffix(" \(command)") || listed.contains(" \(command) "),
                        "\(command) is not listed: \(result.stderr)")
            }
            #expect(!result.stderr.contains("EXIT STATUS"))
        }
        // The whole manual is still there when asked for.
        let manual = try cli.run(["--help"])
        #expect(manual.status == 0 && manual.stdout.contains("EXIT STATUS"))
    }

    @Test func anUnknownCommandSuggestsTheClosest() throws {
        let cli = try CLIFixture()
        let cases: [([String], String)] = [
            (["serch"], "unknown command 'serch'; did you mean 'search'? (list them with: coffer --help)"),
            (["serach", "--service", "x"], "unknown command 'serach'; did you mean 'search'? (list them with: coffer --help)"),
            (["colections"], "unknown command 'colections'; did you mean 'collections'? (list them with: coffer --help)"),
            (["ad", "--service", "x"], "unknown command 'ad'; did you mean 'add'? (list them with: coffer --help)"),
            (["help", "serch"], "unknown command 'serch'; did you mean 'search'? (list them with: coffer --help)"),
            (["alias", "sett", "default", "work"],
             "unknown command 'alias sett'; did you mean 'alias set'? (list them with: coffer alias --help)"),
            (["frobnicate"], "unknown command 'frobnicate' (list them with: coffer --help)"),
            (["import", "kwallet"], "unknown command 'import kwallet' (list them with: coffer import --help)"),
        ]
        for (arguments, message) in cases {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr == "coffer: \(message)\n", "\(arguments)")
            #expect(result.stdout.isEmpty)
        }
        // A misspelt option is still reported as one, with the command's own help.
        let option = try cli.run(["alias", "set", "--bogus", "x", "y"])
        #expect(option.status == 2 && option.stderr == "coffer: unknown option '--bogus' (see: coffer alias set --help)\n")
    }
}
