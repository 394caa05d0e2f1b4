import CofferCrypto

/// What is known of an item apart from its secret.
public struct ItemMetadata: Equatable, Sendable {
    public var label: String
    public var attributes: Attributes
    public var contentType: String
    /// Seconds since the Unix epoch.
    public var created: UInt64
    public var modified: UInt64
    /// The application that created the item (nil: not recorded, as for items made before
    /// Coffer recorded creators, or in a client's name by an import).
    public var creator: Application?

    public init(label: String, attributes: Attributes, contentType: String, created: UInt64, modified: UInt64,
                creator: Application? = nil) {
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.created = created
        self.modified = modified
        self.creator = creator
    }
}

/// An item to add: label, attributes and secret.
public struct NewItem: Sendable {
    public var label: String
    public var attributes: Attributes
    public var secret: Secret
    /// Whom the item's memory is charged to where memory is budgeted per owner (the in-memory
    /// session collection: a D-Bus client's unique name); persistent collections ignore it.
    public var owner: String?
    /// When the item was made and last changed, for an item that existed elsewhere before (an
    /// import); nil: now.
    public var times: (created: UInt64, modified: UInt64)?
    /// The application adding it, recorded as its creator (see `ItemMetadata.creator`).
    public var creator: Application?

    public init(label: String, attributes: Attributes, secret: Secret, owner: String? = nil,
                times: (created: UInt64, modified: UInt64)? = nil, creator: Application? = nil) {
        self.label = label
        self.attributes = attributes
        self.secret = secret
        self.owner = owner
        self.times = times
        self.creator = creator
    }

    /// An item of a Keychain class: sets `xdg:schema` to the class's schema.
    public init(class itemClass: ItemClass, label: String, attributes: Attributes, secret: Secret) {
        var attributes = attributes
        attributes[ItemClass.schemaAttribute] = itemClass.schema
        self.init(label: label, attributes: attributes, secret: secret)
    }

    func validate() throws(CofferError) {
        try Limits.validate(label: label)
        try Limits.validate(attributes: attributes)
        try Limits.validate(secret: secret)
    }
}

/// The changes an update applies to every matched item; `nil` leaves a field as it is.
public struct ItemChanges: Sendable {
    public var label: String?
    /// Replaces the whole attribute map (no merge), as the Secret Service does.
    public var attributes: Attributes?
    public var secret: Secret?
    /// Sets the item's type (its `xdg:schema` attribute), keeping its other attributes as they
    /// are when the change is committed, not as they were when it was asked for.
    public var schema: String?

    public init(label: String? = nil, attributes: Attributes? = nil, secret: Secret? = nil, schema: String? = nil) {
        self.label = label
        self.attributes = attributes
        self.secret = secret
        self.schema = schema
    }

    var isEmpty: Bool { label == nil && attributes == nil && secret == nil && schema == nil }

    /// The attributes an item with `current` ones has after these changes, or nil when they
    /// leave its attributes alone.
    public func attributes(replacing current: Attributes) -> Attributes? {
        guard attributes != nil || schema != nil else { return nil }
        var result = attributes ?? current
        if let schema { result[ItemClass.schemaAttribute] = schema }
        return result
    }

    func validate() throws(CofferError) {
        if let label { try Limits.validate(label: label) }
        if let attributes { try Limits.validate(attributes: attributes) }
        if let schema { try Limits.validate(attributes: [ItemClass.schemaAttribute: schema]) }
        if let secret { try Limits.validate(secret: secret) }
    }
}

/// What `add` does when an item with exactly the same attributes already exists.
public enum DuplicatePolicy: Sendable {
    /// Report `CofferError.duplicateItem` (the Keychain's errSecDuplicateItem).
    case fail
    /// Overwrite that item in place, keeping its id (`coffer add --replace`).
    case replace
    /// Add another item beside it (Secret Service `replace = false`).
    case allow
    /// Overwrite, keeping its id, the first of these items that still exists, whatever its
    /// attributes; insert when none does (Secret Service `replace = true`: the caller chose
    /// them, the items it may change among those its attributes match).
    case replacing([ItemID])

    /// What an insert becomes, given the items whose attributes equal the new item's exactly.
    public enum Resolution: Equatable, Sendable {
        case insert
        case overwrite(ItemID)
    }

    /// Decides an insert against `existing` exact matches (ascending ids), and for
    /// `.replacing` against which items exist now (`exists`); backends call this inside their
    /// commit so the check and the write happen under one lock.
    public func resolve(existing: [ItemID], exists: (ItemID) -> Bool) throws(CofferError) -> Resolution {
        if case .replacing(let chosen) = self {
            return chosen.first(where: exists).map { .overwrite($0) } ?? .insert
        }
        guard let first = existing.first else { return .insert }
        switch self {
        case .fail: throw .duplicateItem
        case .replace: return .overwrite(first)
        case .allow, .replacing: return .insert
        }
    }
}
