import ArgumentParser
import CofferCore

struct DeleteCollection: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-collection",
        abstract: "Delete a collection and every item in it.",
        discussion: """
        Removes the collection's file for good, and the aliases that named it. Takes the \
        collection's id itself (not an alias). On a terminal, coffer asks for confirmation; \
        otherwise --yes is required. No password is needed.

        EXAMPLES
          coffer delete-collection --collection old
          coffer delete-collection --collection ci --yes
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<CollectionByID>

    @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
    var id: String?

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    func validate() throws {
        _ = try target.required(or: id)
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let collection = try access.existing(try target.required(or: id))
        if !yes {
            let info = try access.keychain.info(collection)
            let items = info.itemCount == 1 ? "1 item" : "\(info.itemCount) items"
            guard let answer = try Terminal.ask("Delete collection '\(collection)' and its \(items)? This cannot be undone. [y/N] ") else {
                throw CLIError.usage("refusing to delete collection '\(collection)' without confirmation; pass --yes")
            }
            guard ["y", "yes"].contains(answer.lowercased()) else {
                throw CLIError.usage("cancelled; collection '\(collection)' was not deleted")
            }
        }
        try access.keychain.deleteCollection(collection)
        Output.line("deleted collection '\(collection)'")
    }
}
