import ArgumentParser
import CofferCore
import CofferCrypto

/// `coffer recover`: a new password through the recovery key.
struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Set a new password for a collection whose password is forgotten, with its recovery key.",
        discussion: """
        Asks for the collection's recovery key (as 'coffer slots add-recovery-key' showed it; \
        upper or lower case, with or without the dashes), then a new password twice. The new \
        password replaces the old one, which opens nothing any more; the items, the recovery \
        key and any other slot stay as they were. With --password-stdin, line 1 of stdin is \
        the recovery key and line 2 the new password.

        A wrong recovery key exits with status 3 and counts as a wrong password: the next try \
        waits (1, 2, 4 ... seconds). A mistyped character is caught before that and exits \
        with status 2.

        EXAMPLES
          coffer recover --collection login
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>
    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        let (access, id) = try Slots.open(global, target.collection)
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        let recoveryKey = try RecoveryKey(typed: try input.password(for: id, prompt: "Recovery key for '\(id)': "))
        let password = try input.newPassword(for: id)
        try Slots.wrongPasswordMeansLocked(id, message: "that is not the recovery key of collection '\(id)'; nothing was changed") {
            try access.recover(id, with: recoveryKey, newPassword: password)
        }
        Output.line("collection '\(id)' has a new password")
    }
}
