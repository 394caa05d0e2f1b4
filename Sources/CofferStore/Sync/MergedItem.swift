/// Everything known of one item across devices: every change not yet dropped, from which the
/// item's state follows — a function of the set of changes alone, so that devices that have
/// the same changes agree, whatever order they came in, and a change that comes twice changes
/// nothing.
public struct MergedItem: Sendable, Equatable {
    public let item: SyncItemID
    /// Each version known, with its change.
    public private(set) var changes: [ChangeVersion: SyncChange] = [:]

    public init(item: SyncItemID) { self.item = item }

    /// Takes `change` in; false when it was known already (or is another item's).
    @discardableResult
    public mutating func merge(_ change: SyncChange) -> Bool {
        guard change.item == item, changes[change.version] == nil else { return false }
        changes[change.version] = change
        return true
    }

    /// Drops every change `device` made (its file was compacted: what it still holds comes
    /// again); false when it had none.
    @discardableResult
    public mutating func forget(_ device: DeviceID) -> Bool {
        let before = changes.count
        changes = changes.filter { $0.key.device != device }
        return changes.count != before
    }

    /// The newest version: what the item is on every device that has these changes.
    public var winner: SyncChange? { changes.max { $0.key < $1.key }?.value }

    /// Whether the item exists (its newest change is no deletion).
    public var exists: Bool {
        guard let winner else { return false }
        return winner.content != .deleted
    }

    /// The versions that lost a concurrent edit: neither the newest nor replaced by any known
    /// change, newest first. Resolving one (keeping it or the winner) is a change that replaces
    /// both.
    public var conflicts: [SyncChange] {
        guard let winner else { return [] }
        let replaced = Set(changes.values.flatMap(\.replaces))
        return changes.values.filter { $0.version != winner.version && !replaced.contains($0.version) }
            .sorted { $0.version > $1.version }
    }

    /// The versions a new change of this item on a device replaces: the winner and every
    /// conflict (a change made after seeing them all supersedes them all).
    public var heads: Set<ChangeVersion> {
        Set(([winner].compactMap { $0 } + conflicts).map(\.version))
    }
}
