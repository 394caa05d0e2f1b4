import CofferCrypto

/// How many matches a search returns.
public enum MatchLimit: Sendable {
    case one
    case all
}

/// A search: attribute pairs every match must carry (empty matches every item), an optional
/// collection scope, a match limit, and what to return with each match.
public struct Query: Sendable {
    public var attributes: Attributes
    public var collection: CollectionID?
    public var limit: MatchLimit
    public var returnAttributes: Bool
    public var returnSecret: Bool

    public init(attributes: Attributes = [:], collection: CollectionID? = nil, limit: MatchLimit = .all,
                returnAttributes: Bool = false, returnSecret: Bool = false) {
        self.attributes = attributes
        self.collection = collection
        self.limit = limit
        self.returnAttributes = returnAttributes
        self.returnSecret = returnSecret
    }
}

/// One match. Matches in locked collections carry only their reference.
public struct SearchResult: Sendable {
    public let reference: ItemReference
    public let isLocked: Bool
    /// Present when asked for and the collection is unlocked.
    public let metadata: ItemMetadata?
    /// Present when asked for and the collection is unlocked.
    public let secret: Secret?
}
