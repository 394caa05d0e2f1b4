import ArgumentParser
import CofferCore
import CofferCrypto
import CofferImport
import CofferStore
import FoundationEssentials
import GnomeKeyringFormat

struct ImportGnomeKeyring: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gnome-keyring",
        abstract: "Import gnome-keyring's keyring files.",
        discussion: """
        Reads gnome-keyring's keyring files, in either of its formats (the encrypted one, and \
        the text one it writes for a keyring without a password), and adds their items to the \
        Coffer collection of the same name (--into to choose another), creating it when \
        needed. Labels, attributes (xdg:schema included), secrets and the items' created and \
        modified times are kept. Without FILE arguments, every *.keyring file in \
        $XDG_DATA_HOME/keyrings (else ~/.local/share/keyrings) is read, and Coffer's \
        'default' alias then names the collection of gnome-keyring's default keyring.

        Each file is imported whole or not at all: a wrong password, a damaged or truncated \
        file or an unknown version is reported with the file's name, adds nothing from that \
        file, and the other files are still imported (the exit status is then that of the \
        first failure).

        PASSWORDS
          An encrypted keyring's password is asked on the terminal. The Coffer collection \
          is unlocked with the same password when it opens it; otherwise its own password \
          is asked too. A new collection gets the keyring's password (a keyring without one: \
          a new password is asked). With --password-stdin, each of these is one line of \
          stdin instead, in that order, file after file.

        EXAMPLES
          coffer import gnome-keyring
          coffer import gnome-keyring --dry-run
          coffer import gnome-keyring ~/old-home/.local/share/keyrings/work.keyring --into work
          printf '%s\\n' "$KEYRING_PASSWORD" | coffer import gnome-keyring --password-stdin login.keyring
        """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Keyring files to import (default: all of gnome-keyring's).", valueName: "file"))
    var files: [String] = []

    @Option(help: ArgumentHelp("Import into this collection instead of the one named after each file.", valueName: "id"))
    var into: String?

    @OptionGroup var importing: ImportOptions

    @OptionGroup var readers: ImportAccessOptions

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if let into { _ = try NewCollection.id(into) }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = GnomeKeyringFiles.directory(environment: environment)
        let paths = try files.isEmpty ? Self.keyringFiles(in: directory) : files
        let keychain = Keychain(provider: try FileStore(directory: global.storeDirectory),
                                sessionCollection: false)
        let importer = KeyringImporter(keychain: keychain, input: InputSource(passwordFromStdin: passwords.passwordStdin),
                                       dryRun: importing.dryRun, access: (readers, global.storeDirectory))
        var firstFailure: CLIError?
        var imported: [String: CollectionID] = [:]
        for path in paths {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let target = into.flatMap(CollectionID.init) ?? GnomeKeyringFiles.collectionID(forFile: name)
            do {
                try importer.importFile(path, into: target)
                imported[name] = target
            } catch {
                let failure = CLIError.from(error)
                Output.note("\(Encode.display(path)): \(failure.message)")
                firstFailure = firstFailure ?? failure
            }
        }
        if files.isEmpty, let contents = FileManager.default.contents(atPath: directory + "/default"),
           let name = GnomeKeyringFiles.defaultKeyring(in: [UInt8](contents)), let target = imported[name] {
            if !importing.dryRun { try keychain.setAlias(Keychain.defaultAlias, to: target) }
            Output.line("\(importing.dryRun ? "would point" : "pointed") the 'default' alias at '\(target)', as gnome-keyring's default is '\(Encode.display(name))'")
        }
        if let firstFailure { throw firstFailure }
    }

    /// The `*.keyring` files of gnome-keyring's directory, sorted.
    static func keyringFiles(in directory: String) throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let keyrings = names.filter { $0.hasSuffix(".keyring") }.sorted()
        guard !keyrings.isEmpty else {
            throw CLIError.notFound("no gnome-keyring keyrings in \(Encode.display(directory)); give the files to import")
        }
        return keyrings.map { directory + "/" + $0 }
    }
}
