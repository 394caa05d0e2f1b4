import CofferCore
import CofferStore

/// What coffer records in the audit log when it changes access rules or works on the store
/// files itself (the daemon records what it does).
enum AccessAudit {
    static func record(_ action: AuditEvent.Action, in rules: AccessRules, application: Application? = nil,
                       item: ItemID? = nil, detail: String) {
        record(action, in: rules.collection, of: rules.keychain, directory: rules.directory, application: application,
               item: item, detail: detail)
    }

    /// Records `action` on `collection` of `keychain`, whose store is in `directory`.
    static func record(_ action: AuditEvent.Action, in collection: CollectionID, of keychain: Keychain, directory: String,
                       application: Application? = nil, item: ItemID? = nil, detail: String) {
        let label = item.flatMap { try? keychain.metadata(of: ItemReference(collection: collection, item: $0)).label }
            ?? (try? keychain.info(collection).label)
        let byWhom = Application.thisProgram.map { " by \($0)" } ?? ""
        AuditLogFile(directory: directory).record(
            AuditEvent(action: action, outcome: .ok, application: application ?? Application.thisProgram, collection: collection,
                       item: item, label: label, detail: detail + (application == nil ? "" : byWhom)))
    }
}
