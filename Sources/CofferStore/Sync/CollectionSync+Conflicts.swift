import CofferCore
import CofferCrypto
import SystemKit

/// The versions that lost a concurrent edit: listed, and one of them made the item again.
extension CollectionSync {
    /// A version of an item that lost to a concurrent one made on another device (or here).
    package struct Conflict: Equatable, Sendable {
        package let item: SyncItemID
        /// The local item it is a version of; nil when the item is deleted now.
        package let local: ItemID?
        package let version: ChangeVersion
        /// The lost version's label; nil when the lost change was a deletion.
        package let label: String?
        /// The label the item has now, nil when it is deleted.
        package let currentLabel: String?

        /// What names it in `coffer sync conflicts` and `coffer sync restore`.
        package var reference: String {
            "\(Hex.encode(item.bytes))@\(version.timestamp.milliseconds).\(version.timestamp.counter).\(version.device)"
        }
    }

    /// Every version that lost a concurrent edit and was not superseded since, newest first.
    package func conflicts() throws(CofferError) -> [Conflict] {
        try withSession { s throws(CofferError) -> [Conflict] in
            _ = try read(&s)
            return try conflicts(in: s)
        }
    }

    /// Makes the lost version `reference` names the item's newest, on every device: a change
    /// with its content that replaces every version known. Returns the round that applied it.
    package func restore(_ reference: String) throws(CofferError) -> Round {
        try withSession { s throws(CofferError) -> Round in
            _ = try read(&s)
            guard let conflict = try conflicts(in: s).first(where: { $0.reference == reference }),
                  let merged = s.folder.items[conflict.item], let lost = merged.changes[conflict.version] else {
                throw .invalidArgument("no conflict \(reference); 'coffer sync conflicts' lists them (one may have been resolved meanwhile)")
            }
            let version = ChangeVersion(timestamp: s.state.clock.tick(now: Clock.nowInMilliseconds()), device: s.state.device)
            let content: SyncChange.Content
            switch lost.content {
            case .deleted:
                content = .deleted
            case .item(let sealed):
                let payload = try s.keys.openContent(sealed, item: conflict.item, version: lost.version)
                content = .item(try s.keys.sealContent(payload, item: conflict.item, version: version))
            }
            try appendOwn([.change(SyncChange(item: conflict.item, version: version, replaces: merged.heads, content: content))], &s)
            return try round(&s)
        }
    }

    private func conflicts(in s: Session) throws(CofferError) -> [Conflict] {
        var local: [SyncItemID: ItemID] = [:]
        for (id, entry) in s.state.entries { local[entry.item] = id }
        var found: [Conflict] = []
        for (item, merged) in s.folder.items {
            guard let winner = merged.winner else { continue }
            // A version that says what the winner says (two devices sending the same item
            // again) lost nothing.
            let winnerContent = content(of: winner, in: s)
            for change in merged.conflicts where !(change.content == .deleted && winner.content == .deleted)
                && (winnerContent == nil || content(of: change, in: s) != winnerContent) {
                found.append(Conflict(item: item, local: local[item], version: change.version, label: try label(of: change, in: s),
                                      currentLabel: try label(of: winner, in: s)))
            }
        }
        return found.sorted { $0.version > $1.version }
    }

    /// A keyed digest of what a user sees of `change` (nil for a deletion, or content that does not open).
    private func content(of change: SyncChange, in s: Session) -> [UInt8]? {
        guard case .item(let sealed) = change.content,
              let payload = try? s.keys.openContent(sealed, item: change.item, version: change.version),
              let canonical = try? ItemPayload.canonical(payload) else { return nil }
        return s.keys.digest(of: canonical)
    }

    private func label(of change: SyncChange, in s: Session) throws(CofferError) -> String? {
        guard case .item(let sealed) = change.content else { return nil }
        return try ItemPayload.metadata(from: try s.keys.openContent(sealed, item: change.item, version: change.version)).label
    }
}
