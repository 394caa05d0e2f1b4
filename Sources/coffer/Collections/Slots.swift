import ArgumentParser
import CofferCore
import CofferCrypto
import CofferStore
import SystemKit

/// `coffer slots`: the ways into a collection (its key slots).
struct Slots: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slots",
        abstract: "List, add and remove the ways into a collection (its password, a recovery key).",
        discussion: """
        A collection's items are encrypted with one key, and that key is sealed several ways \
        ("key slots"), each of which opens the collection alone: its password, and a recovery \
        key if you add one. A recovery key is for the day the password is forgotten: \
        'coffer recover' opens the collection with it and sets a new password.

        Adding or removing a slot takes the collection's password; the password's own slot \
        cannot be removed (change it with 'coffer passwd'). These commands work on the store's \
        files directly, with or without a running cofferd.

        EXAMPLES
          coffer slots
          coffer slots add-recovery-key --collection login
          coffer slots remove 2
        """,
        subcommands: [List.self, AddRecoveryKey.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List a collection's key slots (no password needed).",
            discussion: "Prints one line per slot: its id (for 'coffer slots remove'), its kind and when it was added."
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>

        func run() throws {
            let (access, id) = try Slots.open(global, target.collection)
            let slots = try access.keySlots(id)
            let rows = slots.map { ["\($0.id)", $0.kind.described, LocalTime.format(secondsSince1970: $0.created)] }
            for line in TextTable.lines([["ID", "KIND", "ADDED"]] + rows) { Output.line(line) }
        }
    }

    struct AddRecoveryKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-recovery-key",
            abstract: "Add a recovery key, which opens the collection without its password.",
            discussion: """
            Asks for the collection's password, then prints a new recovery key: 32 letters and \
            digits in 8 groups. It is shown this once and kept nowhere in clear: write it down \
            and keep it away from this computer. Anyone who has it can open the collection, so \
            remove its slot ('coffer slots remove ID') if it may have been seen. Typing errors \
            are caught when it is used, before they count as a wrong guess.

            EXAMPLES
              coffer slots add-recovery-key
              printf '%s\\n' "$PASSWORD" | coffer slots add-recovery-key --collection work --password-stdin
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        func run() throws {
            let (access, id) = try Slots.open(global, target.collection)
            let password = try InputSource(passwordFromStdin: passwords.passwordStdin).password(for: id)
            let (recoveryKey, slot) = try Slots.wrongPasswordMeansLocked(id) { try access.addRecoveryKey(id, password: password) }
            Output.line("Recovery key for '\(id)' (key slot \(slot.id)); it is not shown again:")
            Output.line("")
            do {
                try FileDescriptor.standardOutput.writeAll([UInt8]("    ".utf8))
                try recoveryKey.text().writeAll(to: .standardOutput)
            } catch {
                // A key nobody saw must not stay a way in.
                try? access.removeKeySlot(slot.id, of: id, password: password)
                throw CLIError.storeFailure("the recovery key could not be written to standard output (\(error)), so its slot was removed again; run the command again with an output that can be written")
            }
            Output.line("")
            Output.line("")
            Output.line("Keep it apart from this computer. To use it: coffer recover --collection \(id)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a key slot (a recovery key, for one), asking for the collection's password.",
            discussion: """
            The slot's id is the first column of 'coffer slots'. The password's slot cannot be \
            removed. What the removed slot held (a recovery key) opens nothing from then on.

            EXAMPLES
              coffer slots remove 2 --collection work
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        @Argument(help: ArgumentHelp("The slot to remove, as 'coffer slots' lists it.", valueName: "slot-id"))
        var slot: UInt32

        func run() throws {
            let (access, id) = try Slots.open(global, target.collection)
            let password = try InputSource(passwordFromStdin: passwords.passwordStdin).password(for: id)
            try Slots.wrongPasswordMeansLocked(id) { try access.removeKeySlot(slot, of: id, password: password) }
            Output.line("key slot \(slot) of '\(id)' removed")
        }
    }

    /// The store opened in this process (slots live in its files) and the collection named.
    static func open(_ global: GlobalOptions, _ name: String?) throws -> (DirectKeychain, CollectionID) {
        let access = try KeychainAccess(global, direct: true)
        guard let direct = access.keychain as? DirectKeychain else { throw CLIError.storeFailure("the store cannot be opened here") }
        return (direct, try access.resolve(name))
    }

    /// Runs `body`; a wrong password (or key) exits with status 3 and `message`, by default
    /// that the password of `id` was wrong and nothing changed.
    static func wrongPasswordMeansLocked<R>(_ id: CollectionID, message: String? = nil, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            guard isWrongPassword(error) else { throw error }
            throw CLIError.locked(message ?? "wrong password for collection '\(id)'; nothing was changed")
        }
    }
}
