import CofferCore
import CofferCrypto
import DBusKit
import Dispatch
import SecretServiceProtocol
import Synchronization

/// A pending operation that needs the user: unlocking collections, creating one, or changing
/// a password. Its client calls `Prompt`, the dialog runs off the loop (one dialog at a time
/// daemon-wide, so no client can flood the desktop with them), and the client
/// gets `Completed(dismissed, result)` (unicast) with a result of the type it expects, also
/// when dismissed: `ao` for unlock, `o` for creating a collection or an item, `s` for a
/// password change.
final class Prompt: Sendable {
    enum Action {
        /// The paths the client asked for, with the collection each names.
        case unlock([(ObjectPath, CollectionID)])
        case createCollection(label: String, alias: String)
        case changePassword(CollectionID)
        /// CreateItem in a locked collection: unlock it, then store the item (as oo7 does).
        case createItem(CollectionID, NewItem, replace: Bool)
    }

    /// What the dialog thread hands back to the loop.
    private struct Outcome: Sendable {
        var dismissed: Bool
        var result: DBusValue
        var unlocked: [CollectionID] = []
        /// Those of `unlocked` a fingerprint unlocked (the rest, the password).
        var byFingerprint: Set<CollectionID> = []
        var created: CollectionID?
        /// An item stored, and whether it is new (else it replaced one).
        var item: (ItemReference, isNew: Bool)?
    }

    let number: UInt64
    /// The unique name of the client that caused it; only it may show or dismiss it.
    let owner: String
    let action: Action
    private unowned let server: SecretServer
    /// Whether it was shown, and whether it is over (the loop thread's).
    private let progress: LoopOwned<(started: Bool, finished: Bool)>
    /// Set on the loop thread when the prompt is dismissed or its client leaves; the dialog
    /// thread checks it before acting on an answer, so a password typed after that changes
    /// nothing.
    private let cancelled = Mutex(false)

    /// Where the dialogs run (these and the consent dialogs): one after the other, for all clients.
    static let dialogs = DispatchQueue(label: "coffer.prompt-dialogs", qos: .userInitiated)
    /// How many prompts are running or waiting on `dialogs`.
    private static let queued = Mutex(0)

    init(number: UInt64, owner: String, action: Action, server: SecretServer) {
        self.number = number
        self.owner = owner
        self.action = action
        self.server = server
        progress = LoopOwned((false, false), on: server.connection)
    }

    var path: ObjectPath { SecretPath.prompt(number) }

    /// The result sent when nothing was done.
    private var emptyResult: DBusValue {
        switch action {
        case .unlock: .array(elementSignature: .objectPath, [])
        case .createCollection, .createItem: .objectPath(SecretPath.none)
        case .changePassword: .string("")
        }
    }

    /// Shows the dialog; only once.
    func show() throws(DBusError) {
        guard !progress.value.started else { throw SecretServiceError.alreadyExists("This prompt has already been shown.").dbusError }
        progress.value.started = true
        guard let passwords = server.passwords else {
            server.log("prompt p\(number): no password dialog available; dismissed")
            complete(Outcome(dismissed: true, result: emptyResult))
            return
        }
        let connection = server.connection
        // The collections a fingerprint may unlock, decided on the loop now.
        let targets: [CollectionID] = switch action {
        case .unlock(let pairs): pairs.map(\.1)
        case .createItem(let id, _, _): [id]
        default: []
        }
        let fingerprintMayUnlock = server.fingerprint == nil ? [] : Set(targets.filter(server.autoLock.fingerprintMayUnlock))
        let waits = Self.queued.withLock { count in
            count += 1
            return count > 1
        }
        Self.dialogs.async { [self] in
            defer { Self.queued.withLock { $0 -= 1 } }
            // Dismissed or abandoned while waiting behind another dialog: show none, so that
            // prompts made and dismissed in a loop do not pile up dialogs.
            let skip = waits && isCancelled
            let outcome = skip ? Outcome(dismissed: true, result: emptyResult) : run(passwords, fingerprintMayUnlock)
            connection.post { self.complete(outcome) }
        }
    }

    /// Cancels: the client gets `Completed(true, <empty result>)` at once.
    func dismiss() {
        cancelled.withLock { $0 = true }
        complete(Outcome(dismissed: true, result: emptyResult))
    }

    /// The client left: no signal, nothing more to do.
    func abandon() {
        cancelled.withLock { $0 = true }
        progress.value.finished = true
    }

    private func complete(_ outcome: Outcome) {
        for id in outcome.unlocked {
            server.log("collection \(id) unlocked by \(owner)")
            let byFingerprint = outcome.byFingerprint.contains(id)
            server.auditCollection(.unlock, id, by: owner, detail: byFingerprint ? "fingerprint" : "password typed in a prompt")
            server.lockStateChanged(id, byFingerprint: byFingerprint)
        }
        if let id = outcome.created {
            server.log("collection \(id) created by \(owner)")
            server.emit(SecretPath.service, ServiceInterface.name, ServiceInterface.Signal.collectionCreated, [.objectPath(SecretPath.collection(id))])
            server.collectionsChanged()
        }
        if let (reference, isNew) = outcome.item {
            let label: String? = if case .createItem(_, let item, _) = action { item.label } else { nil }
            server.autoLock.used(reference.collection)
            server.gate.application(of: owner) { [server] identified in
                server.auditWrite(.write, of: reference, by: identified?.application, detail: isNew ? "created" : "replaced", label: label)
            }
            server.itemsChanged(in: reference.collection, isNew ? CollectionInterface.Signal.itemCreated : CollectionInterface.Signal.itemChanged,
                                reference)
        }
        guard !progress.value.finished else { return }
        progress.value.finished = true
        server.finishPrompt(self)
        server.emit(path, PromptInterface.name, PromptInterface.Signal.completed, [.boolean(outcome.dismissed), .variant(outcome.result)], to: owner)
    }

    // MARK: The dialogs (off the loop)

    private func run(_ passwords: any PasswordAsker, _ fingerprintMayUnlock: Set<CollectionID>) -> Outcome {
        switch action {
        case .unlock(let targets): return unlock(targets, passwords, fingerprintMayUnlock)
        case .createCollection(let label, let alias): return create(label: label, alias: alias, passwords)
        case .changePassword(let id): return change(id, passwords)
        case .createItem(let id, let item, let replace): return createItem(item, in: id, replace: replace, passwords, fingerprintMayUnlock)
        }
    }

    private func createItem(_ item: NewItem, in id: CollectionID, replace: Bool, _ passwords: any PasswordAsker,
                            _ fingerprintMayUnlock: Set<CollectionID>) -> Outcome {
        let path = SecretPath.collection(id)
        var outcome = unlock([(path, id)], passwords, fingerprintMayUnlock)
        guard !outcome.dismissed, !isCancelled else {
            return Outcome(dismissed: true, result: emptyResult, unlocked: outcome.unlocked, byFingerprint: outcome.byFingerprint)
        }
        do {
            // Replace as when the collection is unlocked, but without a second dialog: only the
            // matching items the creator may change without asking.
            let replacing = replace ? try replaceable(by: item, in: id) : []
            let (reference, isNew) = try server.keychain.insert(item, into: id, onDuplicate: replacing.isEmpty ? .allow : .replacing(replacing))
            for other in replacing where other != reference.item {
                try? server.keychain.delete(ItemReference(collection: id, item: other))
            }
            outcome.result = .objectPath(SecretPath.item(reference))
            outcome.item = (reference, isNew)
        } catch {
            server.log("prompt p\(number): cannot store the item in \(id): \(error)")
            return Outcome(dismissed: true, result: emptyResult, unlocked: outcome.unlocked, byFingerprint: outcome.byFingerprint)
        }
        return outcome
    }

    /// The items of `id` that `item`'s creator may replace without asking (see
    /// `Keychain.replaceable`).
    private func replaceable(by item: NewItem, in id: CollectionID) throws -> [ItemID] {
        guard let creator = item.creator else { return [] }
        let found = try server.keychain.replaceable(by: item.attributes, in: id)
        let decisions = server.keychain.decide(.change, of: found, by: creator)
        return zip(found, decisions).compactMap { reference, decided in
            if case .allowed = decided.decision { reference.item } else { nil }
        }
    }

    /// The user's password, or nil if they cancelled, no dialog could be shown, or the prompt
    /// was dismissed meanwhile.
    private func answer(_ request: PasswordRequest, _ passwords: any PasswordAsker) -> SecureBytes? {
        let answer = passwords.ask(request)
        guard !isCancelled else { return nil }
        switch answer {
        case .password(let password): return password
        case .cancelled: return nil
        case .unavailable(let why):
            server.log("prompt p\(number): \(why)")
            return nil
        }
    }

    /// Whether the prompt was dismissed or abandoned. Checked after each dialog and again
    /// right before each action is committed, so that a Dismiss that came meanwhile leaves
    /// the keychain as it was.
    private var isCancelled: Bool { cancelled.withLock { $0 } }

    private func unlock(_ targets: [(ObjectPath, CollectionID)], _ passwords: any PasswordAsker,
                        _ fingerprintMayUnlock: Set<CollectionID>) -> Outcome {
        var done: [ObjectPath] = []
        var unlocked: [CollectionID] = []
        var byFingerprint: Set<CollectionID> = []
        for (path, id) in targets {
            guard let info = try? server.keychain.info(id) else { continue }
            var error: String?
            while info.isLocked, !unlocked.contains(id) {
                var request = PasswordRequest(title: "Unlock Keyring",
                                              description: "An application wants access to the keyring '\(info.label)', but it is locked.",
                                              error: error)
                let typed: SecureBytes?
                if error == nil, fingerprintMayUnlock.contains(id), let reader = server.fingerprint {
                    switch withFingerprint(reader, unlocking: id, request: &request, passwords) {
                    case .unlocked:
                        unlocked.append(id)
                        byFingerprint.insert(id)
                        continue
                    case .typed(let password): typed = password
                    }
                } else {
                    typed = answer(request, passwords)
                }
                guard let password = typed, !isCancelled else {
                    return Outcome(dismissed: true, result: .objectPathArray(done), unlocked: unlocked, byFingerprint: byFingerprint)
                }
                do {
                    try Keychain.waitingOutThrottle(cancelled: { isCancelled }) { () throws(CofferError) in try server.keychain.unlock(id, password: password) }
                    unlocked.append(id)
                } catch .authenticationFailed {
                    error = "The unlock password was incorrect." + Self.waitNote(server.keychain.secondsBeforeNextUnlock(id))
                    server.connection.post { [server, owner] in
                        server.auditCollection(.unlock, id, by: owner, outcome: .failed, detail: "wrong password typed in a prompt")
                    }
                } catch {
                    server.log("prompt p\(number): cannot unlock \(id): \(error)")
                    return Outcome(dismissed: true, result: .objectPathArray(done), unlocked: unlocked, byFingerprint: byFingerprint)
                }
            }
            done.append(path)
        }
        return Outcome(dismissed: false, result: .objectPathArray(done), unlocked: unlocked, byFingerprint: byFingerprint)
    }

    private enum FingerprintOutcome {
        case unlocked
        /// What was typed in the dialog meanwhile (nil: cancelled), for the password path.
        case typed(SecureBytes?)
    }

    /// The password dialog with the fingerprint reader verifying at the same time: a matching
    /// finger closes the dialog and unlocks with the kept key; otherwise (no reader, no
    /// enrolled finger, mismatches, a failing reader) the dialog's password is used.
    private func withFingerprint(_ reader: any FingerprintReader, unlocking id: CollectionID, request: inout PasswordRequest,
                                 _ passwords: any PasswordAsker) -> FingerprintOutcome {
        let asking = Asking()
        let verification: any FingerprintVerification
        // A finger can match before the dialog is on screen: close it until the asking is over.
        switch reader.beginVerification(matched: { asking.closeUntilAnswered(passwords) }) {
        case .success(let started): verification = started
        case .failure(let unavailable):
            server.log("prompt p\(number): no fingerprint for \(id): \(unavailable.reason); the password unlocks it")
            return .typed(answer(request, passwords))
        }
        request.description += " Touch the fingerprint reader, or type the password."
        let typed = answer(request, passwords)
        asking.answered()
        guard verification.stop(), !isCancelled else { return .typed(typed) }
        do {
            return try server.keychain.unlockWithKeptKey(id) ? .unlocked : .typed(typed)
        } catch {
            server.log("prompt p\(number): the kept key of \(id) no longer opens it (\(error)); the password unlocks it")
            return .typed(typed)
        }
    }

    private func create(label: String, alias: String, _ passwords: any PasswordAsker) -> Outcome {
        let request = PasswordRequest(title: "New Keyring Password",
                                      description: "An application wants to create a new keyring called '\(label)'. Choose the password you want to use for it.",
                                      confirm: true)
        guard let password = answer(request, passwords), !isCancelled else { return Outcome(dismissed: true, result: emptyResult) }
        do {
            let id = try server.keychain.createCollection(label: label, password: password)
            if !alias.isEmpty { try server.keychain.setAlias(alias, to: id) }
            return Outcome(dismissed: false, result: .objectPath(SecretPath.collection(id)), created: id)
        } catch {
            server.log("prompt p\(number): cannot create collection '\(label)': \(error)")
            return Outcome(dismissed: true, result: emptyResult)
        }
    }

    private func change(_ id: CollectionID, _ passwords: any PasswordAsker) -> Outcome {
        let label = (try? server.keychain.info(id).label) ?? id.rawValue
        var error: String?
        while true {
            let askOld = PasswordRequest(title: "Change Keyring Password",
                                         description: "Enter the current password of the keyring '\(label)'.", error: error)
            guard let old = answer(askOld, passwords) else { return Outcome(dismissed: true, result: emptyResult) }
            let askNew = PasswordRequest(title: "Change Keyring Password",
                                         description: "Choose a new password for the keyring '\(label)'.", confirm: true)
            guard let new = answer(askNew, passwords), !isCancelled else { return Outcome(dismissed: true, result: emptyResult) }
            do {
                try Keychain.waitingOutThrottle(cancelled: { isCancelled }) { () throws(CofferError) in try server.keychain.changePassword(id, from: old, to: new) }
                server.log("password of collection \(id) changed by \(owner)")
                return Outcome(dismissed: false, result: .string(""))
            } catch .authenticationFailed {
                error = "The original password was incorrect." + Self.waitNote(server.keychain.secondsBeforeNextUnlock(id))
            } catch {
                server.log("prompt p\(number): cannot change the password of \(id): \(error)")
                return Outcome(dismissed: true, result: emptyResult)
            }
        }
    }
}

/// Whether a password dialog beside a fingerprint verification is still being asked.
private final class Asking: Sendable {
    private let over = Mutex(false)

    func answered() { over.withLock { $0 = true } }

    /// Closes the dialog, again every 50 ms until `answered()` (it may still be starting).
    func closeUntilAnswered(_ passwords: any PasswordAsker) {
        guard !over.withLock({ $0 }) else { return }
        passwords.closeDialogs()
        DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            closeUntilAnswered(passwords)
        }
    }
}

extension Prompt {
    /// What a dialog adds after a wrong password when the next one has to wait.
    static func waitNote(_ seconds: UInt64) -> String {
        guard seconds > 0 else { return "" }
        return " After wrong passwords, the next is checked only \(seconds) second\(seconds == 1 ? "" : "s") from now."
    }
}

/// org.freedesktop.Secret.Prompt over a `Prompt`.
struct PromptObject: DBusObject {
    let server: SecretServer
    let prompt: Prompt

    var interfaces: [InterfaceDescription] { [PromptInterface.description] }

    static let methods = MethodTable<PromptObject>()
        .on(PromptInterface.Prompt.self) { object, _, call in
            try object.checkOwner(call)
            try object.prompt.show()
            return NoArguments()
        }
        .on(PromptInterface.Dismiss.self) { object, _, call in
            try object.checkOwner(call)
            object.prompt.dismiss()
            return NoArguments()
        }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }

    private func checkOwner(_ call: MethodCall) throws(DBusError) {
        guard call.sender == prompt.owner else {
            throw .unknownMethod("this prompt belongs to another client")
        }
    }
}
