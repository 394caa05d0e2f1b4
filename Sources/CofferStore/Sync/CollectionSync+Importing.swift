import CofferCore
import CofferCrypto

/// Other devices' changes into the store: only forward (a version no newer than what the store
/// holds, or than a deletion made or applied here, is never applied), in one commit that goes
/// ahead only while the items it touches are as the export saw them.
extension CollectionSync {
    /// Applies, in one commit, the winner of each of `items` that the store does not hold yet.
    func importChanges(of items: Set<SyncItemID>, into s: inout Session,
                               offsets: [ItemID: Int]) throws(CofferError) -> [SyncedChange] {
        var local: [SyncItemID: ItemID] = [:]
        for (id, entry) in s.state.entries { local[entry.item] = id }
        var changes: [ItemChange] = []
        var expecting: [ItemID: Int?] = [:]
        var plans: [(item: SyncItemID, version: ChangeVersion, digest: [UInt8]?, local: ItemID?, label: String)] = []
        var stateChanged = false
        var collected = Set<SyncItemID>()
        for target in s.collected.sorted() {
            guard let entry = s.state.entries[target], offsets[target] != nil else { continue }
            changes.append(.remove(target))
            expecting[target] = offsets[target]
            plans.append((entry.item, entry.version, nil, target, ""))
            collected.insert(entry.item)
        }
        for item in items.sorted() where !collected.contains(item) {
            guard let winner = s.folder.items[item]?.winner else { continue }
            let target = local[item]
            // The store only moves forward: it holds this version or a newer one already (a
            // file rolled back, or lost with its tombstones, brings nothing back).
            if let target, let held = s.state.entries[target]?.version, winner.version <= held { continue }
            if target == nil, let gone = s.state.deleted[item], winner.version <= gone { continue }
            switch winner.content {
            case .deleted:
                guard let target else {
                    if s.state.deleted[item] == nil { (s.state.deleted[item], stateChanged) = (winner.version, true) }
                    continue
                }
                changes.append(.remove(target))
                expecting[target] = offsets[target]
                plans.append((item, winner.version, nil, target, ""))
            case .item(let sealed):
                let payload = try s.keys.openContent(sealed, item: item, version: winner.version)
                let digest = try s.keys.digest(of: ItemPayload.canonical(payload))
                if let target, s.state.entries[target]?.digest == digest {
                    s.state.entries[target]?.version = winner.version   // the same content: nothing to apply
                    stateChanged = true
                    continue
                }
                let (metadata, secret) = try ItemPayload.item(from: payload)
                if let target {
                    changes.append(.update(target, ItemChanges(label: metadata.label, attributes: metadata.attributes, secret: secret)))
                    expecting[target] = offsets[target]
                } else {
                    changes.append(.insert(NewItem(label: metadata.label, attributes: metadata.attributes, secret: secret,
                                                   times: (metadata.created, metadata.modified), creator: metadata.creator),
                                           onDuplicate: .allow))
                }
                plans.append((item, winner.version, digest, target, metadata.label))
            }
        }
        s.collected = []
        guard !changes.isEmpty else {
            if stateChanged { try save(&s) }
            return []
        }
        var applied: [ChangedItem] = []
        do throws(CofferError) {
            try collection.commit(&changes, expecting: expecting) { applied = $0 }
        } catch let error where error == FileCollection.changedMeanwhile {
            // A client changed one of these items since the export looked: it goes out next
            // round (newer, so it wins) and these are compared again then.
            s.checkEverything = true
            s.collected = Set(plans.filter { collected.contains($0.item) }.compactMap(\.local))
            return []
        }
        var outcome: [SyncedChange] = []
        for (plan, changed) in zip(plans, applied) {
            if let digest = plan.digest {
                s.state.entries[changed.id] = SyncState.Entry(item: plan.item, version: plan.version, digest: digest)
                s.state.deleted[plan.item] = nil
                outcome.append(changed.isNew ? .created(changed.id, label: plan.label) : .changed(changed.id, label: plan.label))
            } else {
                s.state.entries[changed.id] = nil
                s.state.deleted[plan.item] = plan.version
                outcome.append(.deleted(changed.id))
            }
            // Applied here: the next export finds the record moved and the content the same.
        }
        try save(&s)
        return outcome
    }
}
