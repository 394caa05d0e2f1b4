import CofferCore
import CofferStore

/// The labels `coffer log` shows. The log keeps them sealed to each collection's audit key;
/// those of a collection whose password was given here (`--unseal`) are opened.
struct AuditLabels {
    private var openers: [CollectionID: AuditOpener] = [:]
    /// The collections some shown line had a label of that stayed sealed.
    private(set) var stillSealed: Set<CollectionID> = []

    init() {}

    /// Asks the password of each of `collections` in turn (on the terminal, or a line of
    /// stdin each with --password-stdin) and keeps what opens their labels. One whose password
    /// is not given, is wrong, or that no longer exists stays sealed, with a note saying so.
    init(unsealing collections: [CollectionID], global: GlobalOptions, passwords: PasswordOptions) throws {
        guard !collections.isEmpty else { return }
        let access = try KeychainAccess(global, direct: true)
        guard let keychain = access.storeKeychain else { throw CLIError.storeFailure("cannot open the store files") }
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        for id in collections {
            do {
                guard try keychain.collectionIDs().contains(id) else {
                    Output.note("labels of '\(id)' stay sealed: the collection no longer exists, and its key went with it")
                    continue
                }
                _ = try access.unlock(id, input: input)
                guard let file = try keychain.collection(id) as? FileCollection else { continue }
                openers[id] = try file.auditOpener()
            } catch {
                Output.note("labels of '\(id)' stay sealed: \(CLIError.from(error).message)")
            }
        }
    }

    /// `event` with its label opened when it can be.
    mutating func open(_ event: AuditEvent) -> AuditEvent {
        guard let sealed = event.sealedLabel, let collection = event.collection else { return event }
        guard let opener = openers[collection] else {
            stillSealed.insert(collection)
            return event
        }
        var opened = event
        opened.label = opener.open(sealed, collection: collection, item: event.item, time: event.time) ?? "(damaged)"
        opened.sealedLabel = nil
        return opened
    }
}
