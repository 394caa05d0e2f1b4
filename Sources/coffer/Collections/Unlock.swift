import ArgumentParser
import CofferCore

struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock a collection (check its password).",
        discussion: """
        Unlocks the collection (default: the default collection) with its password. \
        Through cofferd the collection stays unlocked in the daemon (no password is asked \
        if it already is), so later commands need none. Without the daemon this checks \
        the password and reports, and the collection is locked again when coffer exits: \
        every command asks for the password itself. A wrong password exits with status 3.

        EXAMPLES
          coffer unlock
          printf '%s\\n' "$PASSWORD" | coffer unlock --collection work --password-stdin
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
    var id: String?

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        _ = try target.name(or: id)
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let collection = try access.resolve(try target.name(or: id))
        let asked = try access.unlock(collection, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        if !access.viaDaemon {
            Output.line("password accepted for '\(collection)' (without the daemon, nothing stays unlocked after coffer exits)")
        } else if asked {
            Output.line("collection '\(collection)' is unlocked (in cofferd, until it is locked)")
        } else {
            Output.line("collection '\(collection)' was already unlocked")
        }
    }
}
