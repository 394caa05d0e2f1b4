import ArgumentParser
import CofferCore

struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock a collection.",
        discussion: """
        Locks the collection (default: the default collection). Through cofferd this locks \
        it in the daemon: the next command that needs it asks for its password. Without \
        the daemon this only reports: coffer keeps nothing unlocked between commands, so \
        every collection is locked already.

        EXAMPLES
          coffer lock
          coffer lock --collection work
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The same as --collection.", valueName: "id"))
    var id: String?

    func validate() throws {
        _ = try target.name(or: id)
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let collection = try access.resolve(try target.name(or: id))
        try access.keychain.lock(collection)
        Output.line("collection '\(collection)' is locked")
    }
}
