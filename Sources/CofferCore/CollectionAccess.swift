/// Who may read a collection's secrets without asking.
public enum AccessPolicy: String, Sendable, CaseIterable {
    /// Every application of the user reads every secret (what every other Secret Service
    /// provider does; collections made before Coffer had policies keep it).
    case open
    /// An item's creator reads it; any other application needs a grant, and the user is asked
    /// (the default for new collections).
    case ask
    /// Only creators and granted applications; nobody is asked.
    case strict

    /// The policy a new collection gets unless told otherwise.
    public static let forNewCollections = AccessPolicy.ask

    /// What each policy means, for help and error texts.
    public var summary: String {
        switch self {
        case .open: "every application may read every secret"
        case .ask: "an item's creator reads it freely; other applications ask the user, who may allow once or always"
        case .strict: "only an item's creator and applications granted access read it; nobody is asked"
        }
    }
}

/// What an application asks to do with an item of another: read its secret, or change it (its
/// secret, label or attributes, replace it, or delete it).
public enum AccessAction: String, Sendable, Hashable, CaseIterable {
    case read
    case change
}

/// What a grant lets its application do: read, change, or both.
public struct AccessRights: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = AccessRights(rawValue: 1)
    public static let change = AccessRights(rawValue: 2)
    public static let all: AccessRights = [.read, .change]

    /// The rights `action` needs.
    public init(_ action: AccessAction) {
        self = action == .read ? .read : .change
    }

    /// `read`, `change` or `read+change`, as `coffer access list` shows them.
    public var name: String {
        [(AccessRights.read, "read"), (.change, "change")].filter { contains($0.0) }.map(\.1).joined(separator: "+")
    }
}

/// A remembered permission for one application to read (or change, or both) one item, or
/// every item of the collection, until it expires. `Item` names the item: its id in the store
/// (`AccessGrant`), or its position in a backup, whose ids change on restoring.
public struct Grant<Item: Hashable & Sendable>: Hashable, Sendable {
    public var application: Application
    /// The one item the grant covers; nil: the whole collection.
    public var item: Item?
    /// What it allows (grants made before Coffer gated changes allow reading only).
    public var rights: AccessRights
    /// When it was given, and when it stops counting (nil: never); seconds since the epoch.
    public var granted: UInt64
    public var expires: UInt64?
    /// For an executable, the SHA-256 of the program file it covers: the grant then holds for
    /// that exact binary only and lapses when the file is replaced. Nil: any binary at the path.
    public var executableDigest: [UInt8]?

    public init(application: Application, item: Item?, rights: AccessRights = .read, granted: UInt64, expires: UInt64? = nil,
                executableDigest: [UInt8]? = nil) {
        self.application = application
        self.item = item
        self.rights = rights
        self.granted = granted
        self.expires = expires
        self.executableDigest = executableDigest
    }

    /// The same grant, for `item` named another way (nil: the whole collection).
    public func naming<Other>(_ item: Other?) -> Grant<Other> {
        Grant<Other>(application: application, item: item, rights: rights, granted: granted, expires: expires,
                     executableDigest: executableDigest)
    }

    public func isExpired(at now: UInt64) -> Bool {
        expires.map { now >= $0 } ?? false
    }
}

/// A grant as the store keeps it, naming its item by id.
public typealias AccessGrant = Grant<ItemID>

extension Grant where Item == ItemID {

    /// Whether it lets `application` (whose executable's digest `digest` computes on demand)
    /// do `action` to `item` at `now`.
    public func covers(_ application: Application, _ action: AccessAction = .read, item: ItemID, at now: UInt64,
                       digest: () -> [UInt8]?) -> Bool {
        guard self.application == application, rights.contains(AccessRights(action)), self.item == nil || self.item == item,
              !isExpired(at: now) else { return false }
        guard let executableDigest else { return true }
        return digest() == executableDigest
    }
}

/// What may happen when an application asks for a secret.
public enum AccessDecision: Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// The collection's policy is `open`.
        case openPolicy
        /// The application created the item.
        case creator
        /// A grant covers it.
        case granted
    }

    case allowed(Reason)
    /// The user must be asked (policy `ask`).
    case ask
    /// Refused without asking (policy `strict`).
    case denied
    /// An application's key (`ApplicationKey`): only the Secret portal hands it out, to that
    /// application alone; no caller of the Secret Service reads or changes it, whatever the policy.
    case reserved
}

/// What `Keychain.decide(_:of:by:)` found for one item.
public enum ItemDecision: Equatable, Sendable {
    /// Decided, with the item's label (for the audit log and the dialog).
    case decided(AccessDecision, label: String)
    /// The item's collection is locked: nothing is decided, and nothing may be read.
    case locked(CollectionID)
    /// No such item, or no such collection.
    case missing
    /// The collection's access rules cannot be read (the text says why): nothing may be read.
    case rulesUnreadable(String)

    public var decision: AccessDecision? {
        if case .decided(let decision, _) = self { decision } else { nil }
    }

    public var label: String? {
        if case .decided(_, let label) = self { label } else { nil }
    }
}

/// A collection's access rules: its policy and the grants given, kept encrypted with it.
public struct CollectionAccess: Equatable, Sendable {
    public var policy: AccessPolicy
    public var grants: [AccessGrant]

    public init(policy: AccessPolicy, grants: [AccessGrant] = []) {
        self.policy = policy
        self.grants = grants
    }

    /// What a collection made before access rules existed has: everything open.
    public static let legacy = CollectionAccess(policy: .open)

    /// Whether `application` may do `action` to `item`, created by `creator` (nil: unknown,
    /// such as an item made before creators were recorded), at `now`: the same rules for reading
    /// and for changing. An unverified process is allowed by the `open` policy alone: it owns
    /// nothing (whatever it calls itself, another process may call itself the same) and no grant
    /// can name it.
    public func decide(_ application: Application, _ action: AccessAction = .read, item: ItemID, creator: Application?,
                       at now: UInt64, digest: () -> [UInt8]? = { nil }) -> AccessDecision {
        if policy == .open { return .allowed(.openPolicy) }
        guard application.isVerified else { return policy == .ask ? .ask : .denied }
        if let creator, creator == application { return .allowed(.creator) }
        if grants.contains(where: { $0.covers(application, action, item: item, at: now, digest: digest) }) { return .allowed(.granted) }
        return policy == .ask ? .ask : .denied
    }

    /// Adds `grant`, replacing any grant of the same application and item (or whole
    /// collection) that allows no more than it does, and drops grants that have expired.
    public mutating func add(_ grant: AccessGrant, now: UInt64) {
        grants.removeAll {
            $0.isExpired(at: now) || ($0.application == grant.application && $0.item == grant.item && grant.rights.isSuperset(of: $0.rights))
        }
        grants.append(grant)
    }

    /// Removes the grants of `application` (for `item` only, or all of them when nil); returns
    /// how many went.
    @discardableResult
    public mutating func revoke(_ application: Application, item: ItemID? = nil) -> Int {
        let before = grants.count
        grants.removeAll { $0.application == application && (item == nil || $0.item == item) }
        return before - grants.count
    }
}
