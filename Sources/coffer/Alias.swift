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

        EXAMPLES
          coffer alias                                  list the aliases
          coffer alias set default --collection work    make 'work' the default
          coffer alias remove default                   back to 'login'
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

        func run() throws {
            let access = try KeychainAccess(global)
            let id = try access.existing(try target.required(or: collection))
            try access.keychain.setAlias(name, to: id)
            Output.line("'\(name)' now names '\(id)'")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the alias NAME.")
        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("The alias.", valueName: "name"))
        var name: String

        func run() throws {
            let access = try KeychainAccess(global)
            guard try access.keychain.aliases()[name] != nil else {
                throw CLIError.notFound("there is no alias '\(Encode.display(name))'. List them with: \(access.command("alias"))")
            }
            try access.keychain.setAlias(name, to: nil)
            Output.line("'\(name)' removed")
        }
    }
}
