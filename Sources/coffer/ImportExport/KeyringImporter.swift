import CofferCore
import CofferCrypto
import CofferImport
import FoundationEssentials
import GnomeKeyringFormat

/// Imports into the store files, a keyring file or a provider's collection at a time (see
/// `ImportGnomeKeyring` and `Import`).
struct KeyringImporter {
    let keychain: Keychain
    let input: InputSource
    let dryRun: Bool
    /// `--policy` and `--grant` of an import from another provider, and the store directory
    /// (for the audit log); nil for a backup, which brings its own rules.
    var access: (options: ImportAccessOptions, directory: String)? = nil

    func importFile(_ path: String, into target: CollectionID) throws {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw CLIError.notFound("cannot read the file")
        }
        let bytes = [UInt8](contents)
        let label = try readable { () throws(GnomeKeyringFileError) in try GnomeKeyringFile.label(bytes) }
        let password = GnomeKeyringFile.isEncrypted(bytes)
            ? try input.password(for: target, prompt: "Password of the gnome-keyring keyring '\(Encode.display(label))' (\(Encode.display(path))): ")
            : nil
        let keyring = try readable { () throws(GnomeKeyringFileError) in try GnomeKeyringFile.read(bytes, password: password) }
        try importItems(keyring.items.map { $0.newItem }, label: keyring.label, into: target, password: password,
                        from: Encode.display(path))
    }

    /// What `importItems` did.
    struct Imported {
        /// Whether it made the collection (else it added to an existing one).
        let createdCollection: Bool
        /// The id each of the items given got, in their order; nil for one already there.
        let itemIDs: [ItemID?]
    }

    /// Adds `items` (from `source`, as it is named in messages) to `target`, unlocking it with
    /// `password` when that opens it (else asking its own), or creating it with `password`
    /// (else a new one, asked), `label` and `policy` (nil: the default for new collections).
    /// A dry run unlocks an existing collection the same way and makes the same plan, so that
    /// what it says would be added is what the import adds; it creates and adds nothing. Nil
    /// on a dry run.
    @discardableResult
    func importItems(_ items: [NewItem], label: String, into target: CollectionID, password: SecureBytes?,
                     policy: AccessPolicy? = nil, from source: String) throws -> Imported? {
        let exists = try keychain.collectionIDs().contains(target)
        if exists { try unlock(target, trying: password) }
        let plan = exists ? try ImportPlan.make(items, into: target, of: keychain) : ImportPlan.intoNewCollection(items, target)
        let skipped = plan.alreadyThere > 0 ? " (\(plan.alreadyThere) already there)" : ""
        let policy = policy ?? access?.options.policy
        let unowned = plan.new.count { $0.creator?.isVerified != true }
        if dryRun {
            Output.line("would import \(plan.new.count) of \(items.count) items from \(source) into '\(target)'\(exists ? skipped : " (a new collection)")")
            let policyThen = try exists ? access?.options.policy ?? keychain.access(of: target).policy : policy ?? .forNewCollections
            if let note = access?.options.note(unowned, in: target, under: policyThen, dryRun: true) { Output.note(note) }
            return nil
        }
        if !exists {
            let newPassword = try password.map { try $0.slice(0..<$0.count) } ?? input.newPassword(for: target)
            let name = label.isEmpty ? target.rawValue : label
            if let policy {
                _ = try keychain.createCollection(label: name, id: target, password: newPassword, policy: policy)
            } else {
                _ = try keychain.createCollection(label: name, id: target, password: newPassword)
            }
        }
        let references = try plan.apply(to: keychain)
        Output.line("imported \(plan.new.count) items from \(source) into '\(target)'\(skipped)")
        if let (options, directory) = access {
            try options.apply(to: target, existing: exists, imported: references.map(\.item), of: keychain, directory: directory)
            if let note = options.note(unowned, in: target, under: try keychain.access(of: target).policy, dryRun: false) {
                Output.note(note)
            }
        }
        var itemIDs: [ItemID?] = Array(repeating: nil, count: items.count)
        for (position, reference) in zip(plan.positions, references) { itemIDs[position] = reference.item }
        return Imported(createdCollection: !exists, itemIDs: itemIDs)
    }

    /// Unlocks the existing collection with the keyring's password when that opens it, else
    /// with its own (asked), once the wait the keyring's wrong one imposes is over.
    private func unlock(_ target: CollectionID, trying password: SecureBytes?) throws {
        guard try keychain.info(target).isLocked else { return }
        if let password, (try? keychain.unlock(target, password: password)) != nil { return }
        let own = try input.password(for: target, prompt: "Password of Coffer's collection '\(target)': ")
        do {
            try Keychain.waitingOutThrottle(of: target) { () throws(CofferError) in try keychain.unlock(target, password: own) }
        } catch CofferError.authenticationFailed {
            throw CLIError.locked("wrong password for collection '\(target)'; nothing was imported")
        }
    }

    /// Runs a read of the file, with its errors said for a person.
    private func readable<T>(_ read: () throws(GnomeKeyringFileError) -> T) throws -> T {
        do {
            return try read()
        } catch .wrongPassword {
            throw CLIError.locked("wrong password for this gnome-keyring keyring; nothing was imported from it")
        } catch .passwordNeeded {
            throw CLIError.usage("this keyring is encrypted and no password was given")
        } catch {
            throw CLIError.storeFailure("\(error); nothing was imported from it")
        }
    }
}
