import ArgumentParser
import CofferBackup
import CofferCore
import CofferCrypto
import CofferStore
import FoundationEssentials
import GnomeKeyringFormat
import SystemKit

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write collections to an encrypted file: a backup, or a gnome-keyring keyring.",
        discussion: """
        --format coffer (the default) writes an encrypted backup of every collection, or of \
        those given with --collection, protected by a passphrase you choose (Argon2id and \
        AES-256-GCM; the format is described in docs/backup-format.md). \
        `coffer import backup FILE` restores it exactly: labels, attributes, secrets, content \
        types, times and aliases, the application that created each item, and each \
        collection's policy and grants (see 'coffer policy' and 'coffer access').

        --format gnome-keyring writes one collection as a gnome-keyring keyring file, \
        encrypted with a password you choose, that gnome-keyring opens: put it in \
        ~/.local/share/keyrings/NAME.keyring to go back to gnome-keyring. gnome-keyring has \
        no access rules: the keyring keeps the items, not who created them nor the \
        collection's policy and grants.

        Export works on the store files (as with --data-dir): each collection's password is \
        asked, then the new passphrase (twice on a terminal). With --password-stdin, each is \
        one line of stdin, in that order. The file is created with mode 0600 and never \
        overwritten unless --force is given; then the new file replaces it in one step, \
        once written whole, and an export that fails leaves it as it was. Nothing is ever \
        written in clear.

        EXAMPLES
          coffer export --output coffer-backup.cbk
          coffer export --format gnome-keyring --collection login --output login.keyring
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case coffer
        case gnomeKeyring = "gnome-keyring"
    }

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The file to write.", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("What to write: coffer (a backup) or gnome-keyring.", valueName: "format"))
    var format: Format = .coffer

    @Option(name: .customLong("collection"),
            help: ArgumentHelp("A collection to export (repeatable; default: all, or for gnome-keyring the default one).", valueName: "id"))
    var collections: [String] = []

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if format == .gnomeKeyring && collections.count > 1 {
            throw ValidationError("a gnome-keyring keyring holds one collection: give at most one --collection")
        }
    }

    func run() throws {
        if !force && FileManager.default.fileExists(atPath: output) {
            throw CLIError.duplicate("\(Encode.display(output)) exists; nothing was written. Choose another file, or add --force to replace it")
        }
        let keychain = Keychain(provider: try FileStore(directory: global.storeDirectory),
                                sessionCollection: false)
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        let ids = try selected(in: keychain)
        var backup = Backup(collections: [], aliases: [:])
        for id in ids {
            try unlock(id, in: keychain, input: input)
            // A gnome-keyring keyring cannot hold access rules: they are not even read.
            backup.collections.append(try Self.read(id, from: keychain, withAccess: format == .coffer))
        }
        let bytes: [UInt8]
        switch format {
        case .coffer:
            backup.aliases = try keychain.aliases().filter { ids.contains($0.value) }
            bytes = try BackupFile.write(backup, passphrase: try input.newPassword(for: CollectionID("backup")!),
                                         kdf: try TestKeyDerivation.parameters())
        case .gnomeKeyring:
            bytes = try GnomeKeyringFile.write(Self.keyring(backup.collections[0]), password: try input.newPassword(for: ids[0]))
        }
        try Self.writePrivately(bytes, to: output)
        let count = backup.collections.reduce(0) { $0 + $1.items.count }
        Output.line("wrote \(count) items of \(ids.map { "'\($0)'" }.joined(separator: ", ")) to \(Encode.display(output))")
    }

    private func selected(in keychain: Keychain) throws -> [CollectionID] {
        let existing = try keychain.collectionIDs()
        if collections.isEmpty {
            if format == .gnomeKeyring {
                guard let id = try keychain.resolveAlias(Keychain.defaultAlias) else {
                    throw CLIError.usage("there is no default collection: say which with --collection")
                }
                return [id]
            }
            guard !existing.isEmpty else { throw CLIError.notFound("there are no collections to export") }
            return existing
        }
        return try collections.map { name in
            guard let id = CollectionID(name), existing.contains(id) else {
                throw CLIError.notFound("no collection named '\(Encode.display(name))'; nothing was written")
            }
            return id
        }
    }

    private func unlock(_ id: CollectionID, in keychain: Keychain, input: InputSource) throws {
        let password = try input.password(for: id)
        do {
            try keychain.unlock(id, password: password)
        } catch CofferError.authenticationFailed {
            throw CLIError.locked("wrong password for collection '\(id)'; nothing was written")
        }
    }

    /// Every item of the unlocked collection `id`, with its secret and creator, and with
    /// `withAccess` the collection's policy and grants (else no policy and no grants).
    static func read(_ id: CollectionID, from keychain: Keychain, withAccess: Bool) throws -> Backup.Collection {
        let info = try keychain.info(id)
        let matches = try keychain.search(Query(collection: id, returnAttributes: true))
        var items: [Backup.Item?] = Array(repeating: nil, count: matches.count)
        try keychain.forEachSecret(of: matches.map(\.reference)) { position, secret in
            guard let metadata = matches[position].metadata else { return }
            items[position] = Backup.Item(label: metadata.label, attributes: metadata.attributes, secret: secret,
                                          created: metadata.created, modified: metadata.modified, creator: metadata.creator)
        }
        let read = items.compactMap { $0 }
        guard read.count == matches.count else {
            throw CLIError.storeFailure("\(matches.count - read.count) items of '\(id)' could not be read; nothing was written")
        }
        var collection = Backup.Collection(id: id, label: info.label, created: info.created, modified: info.modified,
                                           items: read, policy: nil)
        if withAccess {
            collection.keep(try keychain.access(of: id), itemIDs: matches.map(\.reference.item), now: Clock.now())
        }
        return collection
    }

    /// A collection as a gnome-keyring keyring (items numbered from 1).
    static func keyring(_ collection: Backup.Collection) -> GnomeKeyring {
        GnomeKeyring(label: collection.label, created: collection.created, modified: collection.modified,
                     items: collection.items.enumerated().map { index, item in
                         GnomeKeyring.Item(id: UInt32(index + 1), label: item.label, attributes: item.attributes,
                                           secret: item.secret.bytes, created: item.created, modified: item.modified)
                     })
    }

    /// Writes `bytes` to `path` with mode 0600 (created so, never readable by others
    /// meanwhile), replacing a file there (--force) in one step: a failure leaves it as it was.
    static func writePrivately(_ bytes: [UInt8], to path: String) throws {
        do throws(Errno) {
            try FileSystem.replace(path, with: bytes, permissions: 0o600)
        } catch {
            let advice = switch error {
            case .noSpace, .quotaExceeded: "Free some disk space, or choose a file on another disk"
            case .fileTooLarge: "Raise the file size limit (ulimit -f), or choose a file on another file system"
            case .permissionDenied, .notPermitted, .readOnlyFileSystem: "Choose a file in a directory you may create files in"
            default: "Choose another file"
            }
            throw CLIError.storeFailure("cannot write \(Encode.display(path)): \(error.reason); nothing was written "
                                        + "(a file already there is left as it was). \(advice)")
        }
    }
}
