import CofferCore

/// Which audit events `coffer log` prints.
struct AuditLogFilter {
    /// The collection ids to keep (nil: every collection).
    let collections: Set<String>?
    let application: String?
    /// Seconds since 1970 of the earliest event to keep.
    let since: UInt64?
    let deniedOnly: Bool

    /// `collection` is an id, or an alias looked up in `aliases` (events of both are kept).
    init(collection: String?, application: String?, since: UInt64?, deniedOnly: Bool, aliases: [String: CollectionID]) {
        collections = collection.map { name in Set([name] + (aliases[name].map { [$0.rawValue] } ?? [])) }
        self.application = application
        self.since = since
        self.deniedOnly = deniedOnly
    }

    /// Whether every event passes.
    var isEmpty: Bool { collections == nil && application == nil && since == nil && !deniedOnly }

    func matches(_ event: AuditEvent) -> Bool {
        if let collections, !collections.contains(event.collection?.rawValue ?? "") { return false }
        if let since, event.time < since { return false }
        if deniedOnly && event.outcome != .denied { return false }
        if let application {
            guard let app = event.application else { return false }
            let exact = Application(encoded: application).map { $0 == app } ?? false
            if !exact && !app.name.contains(application) { return false }
        }
        return true
    }
}
