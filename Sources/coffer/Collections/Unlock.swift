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

        With --tpm, this machine's TPM opens the collection through its TPM key slot \
        ('coffer slots add-tpm') instead of the password; add --pin if the slot was made \
        with a PIN (asked, or read from the first line of stdin with --password-stdin). A \
        wrong PIN exits with status 3 and counts as a wrong password; a TPM that refuses for \
        another reason (another machine's, this machine's boot changed) says why.

        EXAMPLES
          coffer unlock
          printf '%s\\n' "$PASSWORD" | coffer unlock --collection work --password-stdin
          coffer unlock --tpm
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
    var id: String?

    @OptionGroup var passwords: PasswordOptions

    @Flag(help: "Unlock through the collection's TPM key slot, with this machine's TPM.")
    var tpm = false

    @Flag(help: "With --tpm: the TPM key slot has a PIN; ask for it.")
    var pin = false

    func validate() throws {
        _ = try target.name(or: id)
        if pin && !tpm { throw ValidationError("--pin is the PIN of a TPM key slot: it goes with --tpm") }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let collection = try access.resolve(try target.name(or: id))
        if tpm {
            let input = InputSource(passwordFromStdin: passwords.passwordStdin)
            let pin = try pin ? input.password(for: collection, prompt: "TPM PIN for '\(collection)': ", what: "TPM PIN") : nil
            try Slots.wrongPasswordMeansLocked(collection, message: "wrong TPM PIN for collection '\(collection)'; nothing was changed") {
                try access.keychain.unlockWithTPM(collection, pin: pin)
            }
            Output.line(access.viaDaemon ? "collection '\(collection)' is unlocked (in cofferd, until it is locked)"
                                          : "the TPM opens '\(collection)' (without the daemon, nothing stays unlocked after coffer exits)")
            return
        }
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
