import ArgumentParser
import CofferBackup
import CofferCore
import CofferCrypto
import CofferStore
import Foundation

struct ImportBackup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Restore a backup made by 'coffer export'.",
        discussion: """
        Asks the backup's passphrase, then restores each collection in it: into the \
        collection of the same id (its password is asked to unlock it), or a new one (a new \
        password is asked). Items already there are skipped, so restoring twice adds nothing; \
        aliases are restored too. With --password-stdin, the passphrase and then each \
        password are lines of stdin, in that order.

        EXAMPLE
          coffer import backup coffer-backup.cbk
        """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The backup file.", valueName: "file"))
    var file: String

    @OptionGroup var importing: ImportOptions

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw CLIError.notFound("cannot read \(Encode.display(file))")
        }
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        let passphrase = try input.password(for: CollectionID("backup")!, prompt: "Passphrase of the backup: ")
        let backup: Backup
        do {
            backup = try BackupFile.read([UInt8](contents), passphrase: passphrase)
        } catch BackupError.wrongPassphrase {
            throw CLIError.locked("\(Encode.display(file)): \(BackupError.wrongPassphrase); nothing was restored")
        } catch let error as BackupError {
            throw CLIError.storeFailure("\(Encode.display(file)): \(error); nothing was restored")
        }
        let keychain = Keychain(provider: try FileStore(directory: global.storeDirectory),
                                sessionCollection: false)
        let importer = KeyringImporter(keychain: keychain, input: input, dryRun: importing.dryRun)
        for collection in backup.collections {
            try importer.importItems(collection.items.map(\.newItem), label: collection.label, into: collection.id,
                                     password: nil, from: Encode.display(file))
        }
        guard !importing.dryRun else { return }
        let restored = Set(try keychain.collectionIDs())
        for (name, id) in backup.aliases.sorted(by: { $0.key < $1.key }) where restored.contains(id) {
            try keychain.setAlias(name, to: id)
        }
    }
}
