import ArgumentParser
import CofferCore
import CofferCrypto
import CofferStore
import FoundationEssentials
import SystemKit

/// `coffer sync`: the same collection on every machine, through a folder a sync tool carries.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Keep a collection the same on every machine you own, through a folder that Syncthing (or another sync tool) shares.",
        discussion: """
        Coffer does not send anything over the network itself: it writes, in a folder that \
        your sync tool shares between your machines (Syncthing, Nextcloud, Dropbox...), one \
        file per machine, which only that machine writes, so the sync tool never sees two \
        machines write one file. Everything in it is encrypted: no label, attribute or secret \
        is readable there. Each machine reads the others' files and applies their changes; \
        the running cofferd does so within a second of a file arriving, and tells \
        applications as it does for any change.

        When two machines change the same item before seeing each other's change, the newer \
        change wins on every machine and the other is kept: 'coffer sync conflicts' lists \
        such versions and 'coffer sync restore' brings one back.

        Start on one machine with 'coffer sync enable FOLDER': the collection's password \
        becomes its sync password, which another machine needs, once, to join with 'coffer \
        sync join' (its own collection keeps its own password). A machine's TPM key slot and \
        the collection's own key never enter the folder.

        These commands work on the store's files directly, with or without a running cofferd.

        EXAMPLES
          coffer sync enable ~/Sync --collection login
          coffer sync join ~/Sync/0123abcd... --collection login      (on the other machine)
          coffer sync status
          coffer sync conflicts
        """,
        subcommands: [Status.self, Enable.self, Join.self, Now.self, Conflicts.self, Restore.self, RemoveDevice.self],
        defaultSubcommand: Status.self
    )

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable",
            abstract: "Start syncing a collection through a folder that a sync tool shares.",
            discussion: """
            Makes, in FOLDER, a folder for the collection (named by a new random id) holding \
            its encrypted changes, and writes every item there. Asks for the collection's \
            password, which from then on is also the sync password that another machine \
            joins with. Then, on each other machine, once the sync tool has carried the \
            folder there: coffer sync join <that folder> --collection <its collection>.

            EXAMPLES
              coffer sync enable ~/Sync --collection login
              printf '%s\\n' "$PASSWORD" | coffer sync enable /srv/sync --password-stdin
            """
        )

        @Argument(help: ArgumentHelp("The folder your sync tool shares (Syncthing's default: ~/Sync).", valueName: "folder"))
        var folder: String

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let (direct, id) = try Slots.open(global, target.collection)
            let password = try InputSource(passwordFromStdin: passwords.passwordStdin).password(for: id)
            let collection = try Slots.wrongPasswordMeansLocked(id) { try direct.unlockedFileCollection(id, password: password) }
            let (_, folder) = try direct.recordingKeyChange(id, "sync enabled") {
                try CollectionSync.enable(collection, directory: direct.directory, syncedFolder: Sync.absolute(self.folder), password: password)
            }
            let items = try collection.itemIDs(matching: [:], limit: .all).count
            Output.line("collection '\(id)' is synced through \(folder) (\(items) item(s) written there)")
            Output.line("on each other machine, once your sync tool has carried that folder there:")
            Output.line("  coffer sync join <the folder there> --collection <the collection to sync into>")
        }
    }

    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join",
            abstract: "Sync a collection of this machine with one already synced from another machine.",
            discussion: """
            FOLDER is the collection's folder that 'coffer sync enable' made on the first \
            machine (inside the shared folder, named by a long random id), as the sync tool \
            carried it here. The collection given (by default this machine's default one) \
            keeps its password and its items: those go to the other machines, and theirs come \
            here. Asks for the collection's password, then, if it does not open the folder, \
            the sync password (the first machine's collection password when sync was \
            enabled). With --password-stdin, line 1 is the collection's password and line 2 \
            the sync password, if it differs.

            EXAMPLES
              coffer sync join ~/Sync/0123abcd... --collection login
            """
        )

        @Argument(help: ArgumentHelp("The synced collection's folder, as the sync tool carried it here.", valueName: "folder"))
        var folder: String

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let (direct, id) = try Slots.open(global, target.collection)
            let input = InputSource(passwordFromStdin: passwords.passwordStdin)
            let password = try input.password(for: id)
            let collection = try Slots.wrongPasswordMeansLocked(id) { try direct.unlockedFileCollection(id, password: password) }
            let folder = Sync.absolute(self.folder)
            _ = try direct.recordingKeyChange(id, "sync joined") { () throws -> CollectionSync in
                do {
                    return try CollectionSync.join(collection, directory: direct.directory, folder: folder, password: password)
                } catch CofferError.authenticationFailed {
                    let syncPassword = try input.password(for: id, prompt: "Sync password (of the folder): ", what: "sync password")
                    return try Slots.wrongPasswordMeansLocked(id, message: "wrong sync password for \(folder); nothing was changed") {
                        try CollectionSync.join(collection, directory: direct.directory, folder: folder, password: syncPassword)
                    }
                }
            }
            let items = try collection.itemIDs(matching: [:], limit: .all).count
            Output.line("collection '\(id)' is synced through \(folder); it holds \(items) item(s) now")
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show which collections are synced, through which folder, and the other machines seen there (no password needed).",
            discussion: """
            For each synced collection: its folder, this machine's id there, and each other \
            machine's id with when its file last changed. Files a sync tool left as \
            conflicting copies (two machines writing under one id, e.g. one restored from the \
            other's backup) are shown too; 'coffer doctor' reports them.
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>

        func run() throws {
            let access = try KeychainAccess(global, direct: true)
            guard let direct = access.keychain as? DirectKeychain else { throw CLIError.storeFailure("the store cannot be opened here") }
            let ids = try target.collection.map { [try access.resolve($0)] } ?? FileStore.collectionIDs(in: direct.directory)
            var any = false
            for id in ids {
                guard let state = try SyncState.peek(directory: direct.directory, id: id) else { continue }
                any = true
                Output.line("collection '\(id)': synced through \(state.folder)")
                Output.line("  this machine: \(state.device)")
                for (device, changed) in SyncFolder.deviceFiles(in: state.folder) where device != state.device {
                    Output.line("  other machine: \(device), last change \(changed.map { LocalTime.format(secondsSince1970: $0) } ?? "unknown")")
                }
                for copy in SyncFolder.conflictingCopies(in: state.folder) {
                    Output.line("  warning: \(copy) is a conflicting copy: two machines write under one id (see coffer doctor)")
                }
            }
            if !any {
                Output.line(target.collection == nil ? "no collection is synced; 'coffer sync enable FOLDER' starts syncing one"
                                                      : "collection '\(target.collection ?? "")' is not synced")
            }
        }
    }

    struct Now: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "now",
            abstract: "Sync a collection once, now (what a running cofferd does by itself).",
            discussion: """
            Writes this machine's changes to its file in the synced folder and applies the             other machines' changes to the collection. For machines without a running cofferd             (a server, a CI job); cofferd does this by itself within a second of a change.             Asks for the collection's password.
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let round = try Sync.open(global, target.collection, passwords).sync()
            Output.line("\(round.exported) change(s) sent, \(round.applied.count) change(s) from other machines applied")
            for problem in round.problems { Output.line("warning: \(problem)") }
        }
    }

    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "List the versions that lost to a concurrent change on another machine (kept, restorable).",
            discussion: """
            Asks for the collection's password. Each line names a lost version (its REF, for \
            'coffer sync restore'), the item's label now and the lost version's, when it was \
            made and by which machine. A later change of the item on any machine supersedes \
            the versions listed for it.
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let sync = try Sync.open(global, target.collection, passwords)
            let rows = try sync.conflicts().map { conflict in
                [conflict.reference, conflict.currentLabel ?? "(deleted)", conflict.label ?? "(a deletion)",
                 LocalTime.format(secondsSince1970: conflict.version.timestamp.milliseconds / 1000), "\(conflict.version.device)"]
            }
            guard !rows.isEmpty else { return Output.line("no conflicts") }
            for line in TextTable.lines([["REF", "ITEM NOW", "LOST VERSION", "MADE", "MACHINE"]] + rows) { Output.line(line) }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Make a lost version (from 'coffer sync conflicts') the item's newest, on every machine.",
            discussion: """
            EXAMPLES
              coffer sync conflicts
              coffer sync restore 5f0c...@1764370000000.0.9a1b...
            """
        )

        @Argument(help: ArgumentHelp("The lost version's REF, as 'coffer sync conflicts' shows it.", valueName: "ref"))
        var reference: String

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let (direct, id) = try Slots.open(global, target.collection)
            let sync = try Sync.open(global, target.collection, passwords)
            _ = try direct.recordingKeyChange(id, "a lost version restored") { try sync.restore(reference) }
            Output.line("restored: it is the item's newest version, here now and on the other machines as they sync")
        }
    }

    struct RemoveDevice: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-device",
            abstract: "Stop a machine from reading the collection's changes from now on (the collection moves under a new sync password).",
            discussion: """
            For a machine you no longer own or trust. The collection moves to a new folder, \
            beside the old one in the shared folder, under a new key that only a new sync \
            password opens; this machine syncs there at once. Each other machine is told (in \
            'coffer doctor' and cofferd's log) and joins the new folder with the new \
            password: coffer sync join <new folder> --collection <its collection>. The removed \
            machine keeps what it had already received: change the passwords that matter. \
            Stop sharing the folder with it in your sync tool too.

            Asks for the collection's password, then the new sync password twice (with \
            --password-stdin: line 1, then line 2).

            EXAMPLES
              coffer sync status
              coffer sync remove-device 9a1b2c3d
            """
        )

        @Argument(help: ArgumentHelp("The machine's id as 'coffer sync status' shows it (8 characters of it at least).", valueName: "machine"))
        var machine: String

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let (direct, id) = try Slots.open(global, target.collection)
            let input = InputSource(passwordFromStdin: passwords.passwordStdin)
            let sync = try Sync.open(global, target.collection, passwords, input: input)
            let newPassword = try input.newPassword(for: id, what: "sync password")
            let folder = try direct.recordingKeyChange(id, "machine removed from the sync") { try sync.removeDevice(machine, newPassword: newPassword) }
            Output.line("collection '\(id)' now syncs through \(folder), under the new sync password; machine \(machine) cannot read what changes from now on")
            Output.line("on each other machine: coffer sync join \(folder) --collection <its collection> (with the new sync password)")
        }
    }

    /// The synced collection named, opened with its password (read from `input`, by default
    /// as `passwords` says).
    static func open(_ global: GlobalOptions, _ name: String?, _ passwords: PasswordOptions,
                     input: InputSource? = nil) throws -> CollectionSync {
        let (direct, id) = try Slots.open(global, name)
        guard SyncState.exists(directory: direct.directory, id: id) else {
            throw CLIError.usage("collection '\(id)' is not synced; 'coffer sync enable FOLDER --collection \(id)' syncs it")
        }
        let password = try (input ?? InputSource(passwordFromStdin: passwords.passwordStdin)).password(for: id)
        let collection = try Slots.wrongPasswordMeansLocked(id) { try direct.unlockedFileCollection(id, password: password) }
        return CollectionSync(collection: collection, directory: direct.directory)
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
