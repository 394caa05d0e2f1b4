import ArgumentParser
import CofferCore

/// `coffer alias`: list, set and remove the names that point at collections.
struct Alias: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alias",
        abstract: "List, set or remove aliases (names that point at collections).",
        discussion: """
        An alias is a second name for a collection. 'default' is the one applications use \
        when they name no collection (libsecret's default); without it, 'login' is used. \
        Through cofferd the change is made in the daemon; without it, in the store files. \
        'login' and 'session' are collection ids, not aliases, and cannot be set.

        While 'default' names a collection whose policy is ask or strict, it is pointed \
        elsewhere (or removed) only with that collection's password, asked here: \
        applications that store into 'default' would otherwise send their new secrets \
        to a collection another program made with a password it knows. cofferd refuses \
        such a change over the bus.

        EXAMPLES
          coffer alias                                  list the aliases
          coffer alias set default --collection work    make 'work' the default
          coffer alias remove default                   back to 'login'
          echo "$PASSWORD" | coffer alias set default work --password-stdin
        """,
        subcommands: [List.self, Set.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every alias and the collection it names.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let access = try KeychainAccess(global)
            for (name, id) in try access.keychain.aliases().sorted(by: { $0.key < $1.key }) {
                Output.line("\(Encode.display(name)) -> \(id)")
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Point NAME at a collection.")
        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("The alias (letters, digits and _).", valueName: "name"))
        var name: String

        @OptionGroup var target: CollectionOption<CollectionByID>

        @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
        var collection: String?

        func validate() throws {
            guard CollectionID(name) != nil else { throw ValidationError("an alias name is \(CollectionID.rule)") }
            guard ![CollectionID.login.rawValue, CollectionID.session.rawValue].contains(name) else {
                throw ValidationError("'\(name)' is a collection id, not an alias; choose another name")
            }
            _ = try target.required(or: collection)
        }

        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let access = try KeychainAccess(global)
            let id = try access.existing(try target.required(or: collection))
            try Alias.change(name, to: id, through: access, global, passwords)
            Output.line("'\(name)' now names '\(id)'")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the alias NAME.")
        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("The alias.", valueName: "name"))
        var name: String

        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let access = try KeychainAccess(global)
            guard try access.keychain.aliases()[name] != nil else {
                throw CLIError.notFound("there is no alias '\(Encode.display(name))'. List them with: \(access.command("alias"))")
            }
            try Alias.change(name, to: nil, through: access, global, passwords)
            Output.line("'\(name)' removed")
        }
    }

    /// Points `name` at `collection` (nil: removes it). When that would make another the
    /// default collection than one whose policy is not open, its password is asked and the
    /// change is made on the store files (cofferd, which refuses it over the bus, sees it at once).
    static func change(_ name: String, to collection: CollectionID?, through access: KeychainAccess,
                       _ global: GlobalOptions, _ passwords: PasswordOptions) throws {
        if access.viaDaemon {
            do {
                return try access.keychain.setAlias(name, to: collection)
            } catch let refusal as CLIError where refusal.status == ExitStatus.refused {
                // Its collection's password, below.
            }
        }
        // On the daemon's store files (where it keeps them, should they not be the default).
        var onFiles = global
        if onFiles.dataDir == nil { onFiles.dataDir = (access.keychain as? DaemonKeychain)?.dataDirectory }
        let direct = try KeychainAccess(onFiles, direct: true)
        guard let store = direct.storeKeychain else { throw CLIError.storeFailure("cannot open the store files") }
        if let guarded = try store.collectionGuarding(alias: name, changedTo: collection) {
            _ = try direct.unlock(guarded, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        }
        try direct.keychain.setAlias(name, to: collection)
    }
}
