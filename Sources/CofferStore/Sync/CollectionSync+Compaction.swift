import CofferCore
import SystemKit

/// What keeps device files from growing without end: each device says, now and then, how far
/// it has merged every other device's file (a `merged` record), and drops from its own file,
/// by rewriting it as a new generation, the changes every device has seen superseded — and
/// tombstones nothing else is left of. It never touches another device's file.
extension CollectionSync {
    /// Appends a `merged` record when this device has merged more of the others' files than
    /// it last said, and said it `publishInterval` ago at least.
    func publishMerged(_ s: inout Session) throws(CofferError) {
        let own = s.state.device
        let counts = s.folder.positions.filter { $0.key != own }.mapValues(\.seen)
        let now = Clock.nowInMilliseconds()
        guard !counts.isEmpty, counts != (s.folder.mergedBy[own] ?? [:]), now &- s.publishedAt >= publishInterval else { return }
        try appendOwn([.merged(counts)], &s)
        s.publishedAt = now
        _ = try read(&s)
    }

    /// Rewrites this device's file without what every device has seen superseded, once that is
    /// half of it at least. It is looked at once it has grown by a quarter (32 records at
    /// least) since the last look, so that the cost of looking stays a constant share of the
    /// cost of appending.
    func compactIfWorthIt(_ s: inout Session) throws(CofferError) {
        let own = s.state.device
        guard let position = s.folder.positions[own], position.records >= s.nextCompactionLook else { return }
        let file = SyncDeviceFile(folder: s.state.folder, collection: s.state.uuid, device: own, generation: position.generation)
        let contents = try file.read(keys: s.keys)
        guard contents.problem == nil, contents.generation == position.generation else { return }
        let lastMerged = contents.records.lastIndex { if case .merged = $0.record { true } else { false } }
        var kept: [(sequence: UInt64, record: SyncRecord)] = []
        for (index, entry) in contents.records.enumerated() {
            // The last record stays, whatever it is: its sequence is where the next one's follows.
            if index == contents.records.count - 1 {
                kept.append(entry)
                continue
            }
            switch entry.record {
            case .merged:
                if index == lastMerged { kept.append(entry) }
            case .moved:
                kept.append(entry)
            case .change(let change):
                if !isDroppable(change, sequence: entry.sequence, in: s) { kept.append(entry) }
            }
        }
        guard kept.count * 2 <= contents.records.count else {
            s.nextCompactionLook = position.records + max(32, position.records / 4)
            return
        }
        try SyncDeviceFile(folder: s.state.folder, collection: s.state.uuid, device: own, generation: position.generation + 1)
            .rewrite(kept, keys: s.keys)
        s.nextCompactionLook = UInt64(kept.count) + max(32, UInt64(kept.count) / 4)
        _ = try read(&s)
    }

    /// Whether every device has seen `change` (record `sequence` of its device's file) and it
    /// is no longer needed: superseded by a change every device has seen too, or a tombstone
    /// of an item nothing else is left of.
    private func isDroppable(_ change: SyncChange, sequence: UInt64, in s: Session) -> Bool {
        guard seenByAll(change.version.device, sequence, in: s), let merged = s.folder.items[change.item] else { return false }
        if change.content == .deleted && merged.changes.count == 1 { return true }
        return merged.changes.values.contains { later in
            later.replaces.contains(change.version)
                && s.folder.sequences[later.version].map { seenByAll(later.version.device, $0, in: s) } == true
        }
    }

    /// Whether every device but `device` has merged `device`'s file past `sequence`: this one
    /// as it read it, the others as their latest `merged` records say.
    private func seenByAll(_ device: DeviceID, _ sequence: UInt64, in s: Session) -> Bool {
        let own = s.state.device
        let devices = Set(s.folder.positions.keys).union(s.folder.mergedBy.keys).union(s.folder.damaged.keys)
        return devices.allSatisfy { other in
            if other == device { return true }
            if other == own { return (s.folder.positions[device]?.seen ?? 0) > sequence }
            return (s.folder.mergedBy[other]?[device] ?? 0) > sequence
        }
    }
}
