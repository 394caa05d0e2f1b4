import ArgumentParser
import CofferCore

struct CreateCollection: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-collection",
        abstract: "Create a collection protected by a new password.",
        discussion: """
        Creates an empty collection with the id given (1 to 64 characters of A-Z, a-z, 0-9 \
        and _; 'session' is reserved). The password is asked twice on a terminal, or is \
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
        guard let collection = CollectionID(try target.required(or: id)) else {
            throw ValidationError("collection ids are 1 to 64 characters of A-Z, a-z, 0-9 and _")
        }
        if collection == .session {
            throw ValidationError("'session' is reserved for the daemon's in-memory collection; choose another id")
        }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let requested = CollectionID(try target.required(or: id))!
        let existing = try access.keychain.collectionIDs()
        if existing.contains(requested) {
            throw CLIError.duplicate("a collection named '\(requested)' already exists; choose another id")
        }
        try access.keychain.checkNewCollectionID(requested, existing: existing)
        let password = try InputSource(passwordFromStdin: passwords.passwordStdin).newPassword(for: requested)
        let collection = try access.keychain.createCollection(requested, label: label ?? requested.rawValue, password: password)
        var note = ""
        if try access.keychain.resolveAlias(Keychain.defaultAlias) == nil {
            try access.keychain.setAlias(Keychain.defaultAlias, to: collection)
            note = " (now the default collection)"
        } else if try access.keychain.resolveAlias(Keychain.defaultAlias) == collection {
            note = " (the default collection)"
        }
        Output.line("created collection '\(collection)'\(note)")
    }
}
