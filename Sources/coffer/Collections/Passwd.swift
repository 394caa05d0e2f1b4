import ArgumentParser
import CofferCore

struct Passwd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change a collection's password.",
        discussion: """
        Asks for the current password, then the new one twice (on the terminal). With \
        --password-stdin, line 1 of stdin is the current password and line 2 the new one. \
        The new password may not be empty. A wrong current password exits with status 3 \
        and changes nothing.

        EXAMPLES
          coffer passwd
          printf '%s\\n%s\\n' "$OLD" "$NEW" | coffer passwd --collection work --password-stdin
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
        try access.changePassword(collection, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        Output.line("password of '\(collection)' changed")
    }
}
