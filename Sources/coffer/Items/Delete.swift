import ArgumentParser
import CofferCore

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete matching items.",
        discussion: """
        Deletes the item of the collection that carries all the attributes given, and \
        prints "deleted COLLECTION/ID". When the query matches several items, nothing is \
        deleted unless --all is given, which deletes every match (in one atomic change). \
        With --all and no attribute at all, every item of the collection is deleted.

        Nothing matching is not an error: coffer says so on stderr and exits with status 0, \
        without asking for the password.

        EXAMPLES
          coffer delete --service github.com --account alice
          coffer delete --all --service old.example.com
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Flag(help: "Delete every match (required when several items match).")
    var all = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if item.isEmpty && !all {
            throw ValidationError("give at least one attribute to match, or --all to delete every item of the collection")
        }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        let attributes = try item.attributes()
        let matches = try access.keychain.search(Query(attributes: attributes, collection: id, limit: .all))
        guard !matches.isEmpty else {
            Output.note("no item in '\(id)' matches the query; nothing was deleted")
            return
        }
        if matches.count > 1 && !all {
            throw CLIError.usage("the query matches \(matches.count) items in '\(id)'; nothing was deleted. Pass --all to delete them all, or narrow the query")
        }
        try access.unlock(id, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        let deleted = try access.keychain.delete(Query(attributes: attributes, collection: id, limit: all ? .all : .one))
        if deleted.isEmpty { Output.note("no item in '\(id)' matches the query; nothing was deleted") }
        for reference in deleted { Output.line("deleted \(reference)") }
    }
}
