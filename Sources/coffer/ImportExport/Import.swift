import ArgumentParser
import CofferCore
import CofferImport
import CofferStore
import DBusKit
import SecretServiceClient

/// `coffer import …`: bring secrets in from another provider.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Bring secrets in from another Secret Service provider.",
        discussion: """
        `coffer import gnome-keyring` reads gnome-keyring's files, `coffer import backup` \
        restores a backup made by `coffer export` (see their --help). \
        `coffer import --from-bus` copies every collection and item from whichever provider \
        owns org.freedesktop.secrets on the session bus right now (gnome-keyring, KeePassXC, \
        KWallet, oo7), over the Secret Service API: a locked collection is unlocked through \
        that provider's own prompt. Each collection goes into the Coffer collection named \
        after it (its last path element), created with a new password when it does not exist.

        Imports work on the store files (as with --data-dir), also while cofferd runs: it \
        sees the new items at once. Each collection or file is imported whole or not at all, \
        and importing the same thing twice adds nothing: an item whose label, attributes and \
        secret are already in the collection is skipped.

        With --password-stdin, each password coffer would ask for (a collection's own, or a \
        new one) is one line of stdin, in the order of the collections.

        EXAMPLES
          coffer import --from-bus --dry-run
          coffer import --from-bus
        """,
        subcommands: [ImportGnomeKeyring.self, ImportBackup.self]
    )

    @OptionGroup var global: GlobalOptions

    @Flag(name: .customLong("from-bus"), help: "Copy everything from the provider on the session bus now.")
    var fromBus = false

    @OptionGroup var importing: ImportOptions

    @OptionGroup var readers: ImportAccessOptions

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        guard fromBus else { throw CleanExit.helpRequest(self) }
        let client: SecretServiceClient
        do {
            client = try SecretServiceClient.connectToSessionBus()
        } catch {
            throw CLIError.notFound("no Secret Service provider to import from: \(error.message)")
        }
        defer { client.close() }
        let collections = try BusImport.read(from: client) { Output.note($0) }
        let keychain = Keychain(provider: try FileStore(directory: global.storeDirectory),
                                sessionCollection: false)
        let importer = KeyringImporter(keychain: keychain, input: InputSource(passwordFromStdin: passwords.passwordStdin),
                                       dryRun: importing.dryRun, access: (readers, global.storeDirectory))
        var firstFailure: CLIError?
        for collection in collections {
            let source = "'\(Encode.display(collection.label))' (\(collection.path))"
            do {
                guard let items = collection.items else {
                    throw CLIError.locked("\(collection.problem ?? "its items could not be read"); nothing was imported from it")
                }
                try importer.importItems(items, label: collection.label, into: collection.id, password: nil, from: source)
            } catch {
                let failure = CLIError.from(error)
                Output.note("\(source): \(failure.message)")
                firstFailure = firstFailure ?? failure
            }
        }
        if let firstFailure { throw firstFailure }
    }
}
