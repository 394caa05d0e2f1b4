import CofferCore
import CofferStore

/// What coffer records in the audit log when it changes access rules or works on the store
/// files itself (the daemon records what it does).
enum AccessAudit {
    static func record(_ action: AuditEvent.Action, in rules: AccessRules, application: Application? = nil,
                       item: ItemID? = nil, detail: String) {
        let label = item.flatMap { try? rules.keychain.metadata(of: ItemReference(collection: rules.collection, item: $0)).label }
            ?? (try? rules.keychain.info(rules.collection).label)
        let byWhom = Application.thisProgram.map { " by \($0)" } ?? ""
        AuditLogFile(directory: rules.directory).record(
            AuditEvent(action: action, outcome: .ok, application: application ?? Application.thisProgram, collection: rules.collection,
                       item: item, label: label, detail: detail + (application == nil ? "" : byWhom)))
    }
}
