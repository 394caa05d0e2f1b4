import ArgumentParser
import CofferCore
import CofferCrypto
import CofferStore
import SystemKit
import TPMKit

/// `coffer slots`: the ways into a collection (its key slots).
struct Slots: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slots",
        abstract: "List, add and remove the ways into a collection (its password, a recovery key, this machine's TPM).",
        discussion: """
        A collection's items are encrypted with one key, and that key is sealed several ways \
        ("key slots"), each of which opens the collection alone: its password, a recovery \
        key if you add one, and this machine's TPM if you add a slot for it. A recovery key \
        is for the day the password is forgotten: 'coffer recover' opens the collection with \
        it and sets a new password. A TPM slot opens it without a password on this machine \
        only ('coffer unlock --tpm', 'cofferd --unlock-with-tpm', and pam_coffer at a login \
        that typed no password).

        Adding or removing a slot takes the collection's password; the password's own slot \
        cannot be removed (change it with 'coffer passwd'). These commands work on the store's \
        files directly, with or without a running cofferd. A slot removed, or a password \
        changed, still opens copies of the collection's files made before (backups, another \
        disk): the key it sealed is the same.

        EXAMPLES
          coffer slots
          coffer slots add-recovery-key --collection login
          coffer slots add-tpm --collection login
          coffer slots remove 2
        """,
        subcommands: [List.self, AddRecoveryKey.self, AddTPM.self, Remove.self],
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
            let rows = slots.map { ["\($0.id)", Slots.describe($0), LocalTime.format(secondsSince1970: $0.created)] }
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

    struct AddTPM: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-tpm",
            abstract: "Add a slot this machine's TPM opens, optionally bound to its boot state (PCRs) and a PIN.",
            discussion: """
            Asks for the collection's password, then has this machine's TPM 2.0 seal a new \
            key for it. The slot opens the collection on this machine only, without the \
            password: 'coffer unlock --tpm', 'cofferd --unlock-with-tpm' on a headless machine, \
            and pam_coffer at a login that typed no password (autologin, fingerprint, smart \
            card). It protects the files against being read elsewhere (a stolen disk, a \
            backup); it does not protect against someone who starts this machine and logs in as \
            you. --pcrs binds the slot to the boot state too: it then refuses if the firmware, \
            boot loader or Secure Boot settings change (PCR 7 is Secure Boot's state), and the \
            password or a recovery key is needed until a new slot is made. --pin asks for a PIN of \
            at least 6 characters (or reads it from the second line of stdin with \
            --password-stdin); wrong PINs count as wrong passwords, and in the TPM's own \
            lockout. A collection has one slot with a PIN. Where the TPM's lockout has no \
            password (most), a program running as you can reset it: choose a long PIN.

            The TPM is /dev/tpmrm0, which needs membership of its group (usually 'tss'), or \
            the one $COFFER_TPM_TCTI names in tpm2-tss's terms.

            EXAMPLES
              coffer slots add-tpm
              coffer slots add-tpm --collection login --pcrs 7 --pin
            """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: CollectionOption<AnyCollection>
        @OptionGroup var passwords: PasswordOptions

        @Option(help: ArgumentHelp("Bind the slot to these PCRs' present values (0 to 23, comma-separated).", valueName: "list"))
        var pcrs: String?

        @Flag(help: "Ask for a PIN the slot then needs.")
        var pin = false

        func validate() throws { _ = try selection() }

        private func selection() throws -> PCRSelection {
            guard let pcrs else { return .none }
            let indices = pcrs.split(separator: ",", omittingEmptySubsequences: false).compactMap { Int($0.filter { $0 != " " }) }
            guard indices.count == pcrs.split(separator: ",", omittingEmptySubsequences: false).count,
                  let selection = PCRSelection(indices) else {
                throw ValidationError("--pcrs takes PCR numbers from 0 to 23, comma-separated, such as 7 or 0,7; got '\(pcrs)'")
            }
            return selection
        }

        func run() throws {
            let (access, id) = try Slots.open(global, target.collection)
            let input = InputSource(passwordFromStdin: passwords.passwordStdin)
            let password = try input.password(for: id)
            let pin = try pin ? input.newPassword(for: id, what: "TPM PIN") : nil
            let slot = try Slots.wrongPasswordMeansLocked(id) { try access.addTPMSlot(id, pin: pin, pcrs: try selection(), password: password) }
            Output.line("key slot \(slot.id) of '\(id)': \(Slots.describe(slot)); unlock with: coffer unlock --tpm\(slot.tpm?.hasPIN == true ? " --pin" : "") --collection \(id)")
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

    /// A slot's kind as listed, with what a TPM slot is bound to.
    static func describe(_ slot: KeySlot) -> String {
        guard let tpm = slot.tpm else { return slot.kind.described }
        let bindings = (tpm.pcrs.isEmpty ? [] : ["PCRs " + tpm.pcrs.indices.map(String.init).joined(separator: ",")]) + (tpm.hasPIN ? ["PIN"] : [])
        return bindings.isEmpty ? "TPM" : "TPM (\(bindings.joined(separator: ", ")))"
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
