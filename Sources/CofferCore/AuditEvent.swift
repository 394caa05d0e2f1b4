/// One entry of the audit log: who did what to which collection or item, and how it ended.
/// Never holds a secret; labels and application names are its only free text, and the log
/// keeps labels sealed.
public struct AuditEvent: Equatable, Sendable {
    public enum Action: String, Sendable, CaseIterable {
        /// A secret was read (or a read was refused).
        case read
        /// An item was created, or its secret, label or attributes changed.
        case write
        case delete
        case unlock
        case lock
        /// A grant was given (from a prompt's "Always allow", or `coffer access grant`).
        case grant
        case revoke
        /// A collection's policy changed.
        case policy
        /// The Flatpak portal handed an app its master secret.
        case portal
        /// A way into a collection changed: a key slot added or removed, a password recovered.
        case keys
    }

    public enum Outcome: String, Sendable, CaseIterable {
        /// Done, or allowed.
        case ok
        /// Refused by a policy, a grant's absence, or the user.
        case denied
        /// Could not be done (a wrong password, a locked collection, an error).
        case failed
    }

    /// Seconds since the Unix epoch.
    public var time: UInt64
    public var action: Action
    public var outcome: Outcome
    /// The application that asked (nil: not known, e.g. the service itself).
    public var application: Application?
    public var collection: CollectionID?
    public var item: ItemID?
    /// The item's label (or the collection's, for collection events).
    public var label: String?
    /// The label sealed to the collection's audit key, as the log holds it (the store's
    /// `AuditKey`): what a line read back from the log has instead of `label`.
    public var sealedLabel: [UInt8]?
    /// Why, or how: "creator", "granted", "asked: allowed once", "strict policy", "wrong password"...
    public var detail: String?
    /// On a line that sums up refusals folded together (see `AuditLogFile`): how many more of
    /// the application's refusals like the one recorded before it came within the interval.
    public var repeated: UInt64?

    public init(time: UInt64 = Clock.now(), action: Action, outcome: Outcome, application: Application? = nil,
                collection: CollectionID? = nil, item: ItemID? = nil, label: String? = nil, detail: String? = nil,
                repeated: UInt64? = nil) {
        self.time = time
        self.action = action
        self.outcome = outcome
        self.application = application
        self.collection = collection
        self.item = item
        self.label = label
        self.detail = detail
        self.repeated = repeated
    }
}

/// Where audit events go (the store's audit log file). Recording must be cheap and must not
/// wait for the disk: a read is never made to wait for a durable write.
public protocol AuditRecorder: Sendable {
    func record(_ event: AuditEvent)
    /// Records `events` in order; a recorder may write them at once.
    func record(contentsOf events: [AuditEvent])
}

extension AuditRecorder {
    public func record(contentsOf events: [AuditEvent]) {
        for event in events { record(event) }
    }
}
