import ArgumentParser
import CofferCore

struct CreateCollection: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-collection",
        abstract: "Create a collection protected by a new password.",
        discussion: """
        Creates an empty collection with the id given: 1 to 64 characters of A-Z, a-z, 0-9 \
        and _, where case matters ('Work' and 'work' are two collections); 'session' is \
        reserved. The same ids are accepted with and without the daemon. The password is asked twice on a terminal, or is \
        the first line of stdin with --password-stdin; it may not be empty. If no \
        collection is the default yet, the 'default' alias is pointed at the new one.

        EXAMPLES
          coffer create-collection --collection login
          coffer create-collection --collection work --label "Work accounts"
          printf '%s\\n' "$PASSWORD" | coffer create-collection --collection ci --password-stdin
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<NewCollection>

    @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
    var id: String?

    @Option(help: ArgumentHelp("Its display label (default: the id).", valueName: "label"))
    var label: String?

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        _ = try NewCollection.id(try target.required(or: id))
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let requested = try NewCollection.id(try target.required(or: id))
        let existing = try access.keychain.collectionIDs()
        if existing.contains(requested) {
            throw CLIError.duplicate("a collection named '\(requested)' already exists; choose another id")
        }
        let password = try InputSource(passwordFromStdin: passwords.passwordStdin).newPassword(for: requested)
        let collection = try access.keychain.createCollection(requested, label: label ?? requested.rawValue, password: password)
        var note = ""
        if try access.keychain.resolveAlias(Keychain.defaultAlias) == nil {
            try access.keychain.setAlias(Keychain.defaultAlias, to: collection)
            note = " (now the default collection)"
        } else if try access.keychain.resolveAlias(Keychain.defaultAlias) == collection {
            note = " (the default collection)"
        }
        if collection != requested {
            // Another Secret Service (gnome-keyring) may derive ids from labels its own way.
            note += " (the Secret Service chose this id, not '\(requested)')"
        }
        Output.line("created collection '\(collection)'\(note)")
    }
}
