import CofferCore
import CofferCrypto
import DBusKit

/// How unlocking a collection through the password dialog ended.
enum DialogUnlockOutcome: Sendable {
    /// The password typed unlocked it.
    case unlocked
    /// Someone else unlocked it meanwhile (no dialog needed any more).
    case alreadyUnlocked
    /// The user cancelled the dialog; it stays locked.
    case cancelled
    /// No dialog could be shown, or unlocking failed for another reason than a wrong
    /// password; the text says why (for the log, never containing a secret).
    case notUnlocked(String)
}

extension SecretServer {
    /// Unlocks collection `id` with the password the user types into the dialog, asking again
    /// after a wrong one, as an unlock prompt does. The dialog waits its turn behind every
    /// prompt's (one dialog at a time daemon-wide). Blocks the calling thread until the user
    /// answers: never call it on the loop thread. `description` is the dialog's sentence saying
    /// who wants what.
    ///
    /// Once unlocked, the loop thread logs the unlock (by `requester`, words for the log),
    /// records it in the audit log (by `application`) and announces the new lock state, as
    /// after an unlock prompt.
    func unlockThroughDialog(_ id: CollectionID, requester: String, application: Application?,
                             description: String) -> DialogUnlockOutcome {
        guard let passwords else { return .notUnlocked("no password dialog is configured") }
        let outcome = Prompt.dialogs.sync { () -> DialogUnlockOutcome in
            var error: String?
            while true {
                guard let info = try? keychain.info(id) else { return .notUnlocked("collection \(id) is gone") }
                guard info.isLocked else { return .alreadyUnlocked }
                let request = PasswordRequest(title: "Unlock Keyring", description: description, error: error)
                switch passwords.ask(request) {
                case .cancelled:
                    return .cancelled
                case .unavailable(let why):
                    return .notUnlocked(why)
                case .password(let password):
                    do {
                        try Keychain.waitingOutThrottle { () throws(CofferError) in try keychain.unlock(id, password: password) }
                        return .unlocked
                    } catch CofferError.authenticationFailed {
                        error = "The unlock password was incorrect." + Prompt.waitNote(keychain.secondsBeforeNextUnlock(id))
                    } catch {
                        return .notUnlocked("cannot unlock \(id): \(error)")
                    }
                }
            }
        }
        if case .unlocked = outcome {
            connection.post { [self] in
                log("collection \(id) unlocked by \(requester)")
                gate.record(AuditEvent(action: .unlock, outcome: .ok, application: application, collection: id,
                                       label: try? keychain.info(id).label, detail: "password typed in a dialog for the Secret portal"))
                lockStateChanged(id)
            }
        }
        return outcome
    }
}
