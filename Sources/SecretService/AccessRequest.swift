import CofferCore

/// What a client asks to do with items: read their secrets, or change them, in words for
/// dialogs, errors and the audit log.
struct AccessRequest: Sendable, Hashable {
    let action: AccessAction
    /// As in "APP wants to VERB the item 'X'": `read`, `change the secret of`, `delete` …
    let verb: String
    /// The audit log's action for it.
    let auditAction: AuditEvent.Action

    /// Reading secrets.
    static let read = AccessRequest(action: .read, verb: "read", auditAction: .read)

    /// Changing items: `verb` says how (`change the secret of`, `rename`, `replace` …).
    static func change(_ verb: String) -> AccessRequest {
        AccessRequest(action: .change, verb: verb, auditAction: .write)
    }

    /// Deleting items.
    static let delete = AccessRequest(action: .change, verb: "delete", auditAction: .delete)

    /// Deleting a whole collection, with the items in it.
    static let deleteCollection = AccessRequest(action: .change, verb: "delete, with their keyring,", auditAction: .delete)

    /// What the things asked about are called: the secret(s) for a read, the item(s) otherwise.
    func noun(_ count: Int) -> String {
        switch (action, count) {
        case (.read, 1): "the secret"
        case (.read, _): "\(count) secrets"
        case (.change, 1): "the item"
        case (.change, _): "\(count) items"
        }
    }
}

/// What a client may do with one of the items it asked about.
enum AccessVerdict: Equatable, Sendable {
    /// It may: only these are read or changed.
    case allowed
    /// Its collection is locked (GetSecret answers IsLocked; GetSecrets leaves it out).
    case locked
    /// It does not exist.
    case missing
    /// It may not; why, in words for the client's error message.
    case refused(String)
}

/// What a client may do with the items it asked about.
struct Authorization: Sendable {
    /// The application the client was identified as (nil: it could not be).
    var application: Application?
    /// One verdict per item asked about, in the order they were asked for.
    var verdicts: [AccessVerdict]

    /// The refused items, with why.
    func refused(among references: [ItemReference]) -> [(ItemReference, String)] {
        zip(references, verdicts).compactMap { reference, verdict in
            if case .refused(let why) = verdict { (reference, why) } else { nil }
        }
    }
}
