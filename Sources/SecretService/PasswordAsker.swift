import CofferCrypto

/// What a prompt asks the user.
public struct PasswordRequest: Sendable {
    /// Window title, e.g. "Unlock Keyring".
    public var title: String
    /// A sentence saying why, e.g. "An application wants access to the keyring 'login'."
    public var description: String
    /// The label next to the entry, e.g. "Password:".
    public var prompt: String
    /// Shown above the entry after a failed try, e.g. "Wrong password, try again."
    public var error: String?
    /// Ask twice and require both entries to match (for new passwords).
    public var confirm: Bool

    public init(title: String, description: String, prompt: String = "Password:", error: String? = nil, confirm: Bool = false) {
        self.title = title
        self.description = description
        self.prompt = prompt
        self.error = error
        self.confirm = confirm
    }
}

/// How asking ended.
public enum PasswordAnswer: Sendable {
    case password(SecureBytes)
    /// The user cancelled or closed the dialog.
    case cancelled
    /// No dialog could be shown; the text says why (for the log, never containing a secret).
    case unavailable(String)
}

/// Asks the user for a password. `ask` blocks until the user answers, so callers run it off
/// the D-Bus loop.
public protocol PasswordAsker: Sendable {
    func ask(_ request: PasswordRequest) -> PasswordAnswer
    /// Closes the dialogs on screen now (each `ask` and `confirm` returns as cancelled).
    func closeDialogs()
}

/// What a consent dialog asks: whether an application may read a secret.
public struct ConsentRequest: Sendable {
    public var title: String
    /// Who wants what, e.g. "/usr/bin/python3 wants to read 'GitHub token' from 'login'."
    public var description: String
    public var allowOnce: String
    /// Nil: no "Always allow" button (for a caller no grant can name: an unverified process).
    public var allowAlways: String?
    public var deny: String

    public init(title: String, description: String, allowOnce: String = "Allow once", allowAlways: String? = "Always allow",
                deny: String = "Deny") {
        self.title = title
        self.description = description
        self.allowOnce = allowOnce
        self.allowAlways = allowAlways
        self.deny = deny
    }
}

/// How a consent dialog ended.
public enum ConsentAnswer: Equatable, Sendable {
    case allowOnce
    case allowAlways
    /// The user refused or closed the dialog.
    case deny
    /// No dialog could be shown; the text says why (for the log).
    case unavailable(String)
}

/// Asks the user to allow or refuse an access. `confirm` blocks until the user answers, so
/// callers run it off the D-Bus loop.
public protocol ConsentAsker: Sendable {
    func confirm(_ request: ConsentRequest) -> ConsentAnswer
    /// Closes the dialogs on screen now (each `confirm` returns `.deny`).
    func closeDialogs()
}
