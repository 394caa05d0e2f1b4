import ArgumentParser
import CofferBackup
import CofferCore
import CofferCrypto
import CofferStore
import FoundationEssentials

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

        Each item keeps the application that created it. A collection restored as a new one \
        gets the backup's policy and grants, each grant re-pointed at its item's new number. \
        Restored into an existing collection, the collection keeps its own policy, and the \
        backup's grants are added for the items imported only: a grant for the whole \
        collection becomes one per imported item, so the items that were there before are \
        not opened to anyone. A backup in format version 1, written before backups kept \
        creators and access rules, holds none: its new collections get ask, the policy of \
        every new collection, since it cannot tell whether they were open, ask or strict; \
        'coffer policy' sets another.

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
            let imported = try importer.importItems(collection.items.map(\.newItem), label: collection.label, into: collection.id,
                                                    password: nil, policy: collection.policy, from: Encode.display(file))
            if let imported {
                try restoreAccess(of: collection, imported, in: keychain)
            }
        }
        guard !importing.dryRun else { return }
        let restored = Set(try keychain.collectionIDs())
        for (name, id) in backup.aliases.sorted(by: { $0.key < $1.key }) where restored.contains(id) {
            try keychain.setAlias(name, to: id)
        }
    }

    /// Gives `collection`'s grants for the items just `imported` (see the help), records them
    /// in the audit log, and says what the collection's rules are now.
    private func restoreAccess(of collection: Backup.Collection, _ imported: KeyringImporter.Imported,
                               in keychain: Keychain) throws {
        let id = collection.id
        let grants = collection.restoredGrants(itemIDs: imported.itemIDs, intoNewCollection: imported.createdCollection)
        let now = Clock.now()
        if !grants.isEmpty {
            try keychain.updateAccess(of: id) { access in
                for grant in grants { access.add(grant, now: now) }
            }
            for grant in grants {
                AccessAudit.record(.grant, in: id, of: keychain, directory: global.storeDirectory, application: grant.application,
                                   item: grant.item, detail: "restored from a backup (coffer import backup)")
            }
        }
        let policy = try keychain.access(of: id).policy
        let granted = grants.isEmpty ? "" : "; \(grants.count) grant(s) restored"
        if !imported.createdCollection {
            Output.line("'\(id)' keeps its policy, \(policy.rawValue)\(granted)")
        } else if collection.policy == nil {
            Output.line("'\(id)' is \(policy.rawValue): this backup is from before backups kept access rules; if the collection was open, run: coffer policy --collection \(id) open")
        } else {
            Output.line("'\(id)' is \(policy.rawValue), as in the backup\(granted)")
        }
    }
}
