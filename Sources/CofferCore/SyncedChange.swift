/// One change another device made to an item, as applied to this machine's store by the sync
/// of a collection (what the daemon announces to clients).
public enum SyncedChange: Equatable, Sendable {
    case created(ItemID, label: String)
    case changed(ItemID, label: String)
    case deleted(ItemID)
}
