/// Who may do what to a collection's items: its access rules, and the decisions made by them.
extension Keychain {
    /// Collection `id`'s policy and grants (it must be unlocked).
    public func access(of id: CollectionID) throws(CofferError) -> CollectionAccess {
        let backend = try collection(id)
        guard !backend.isLocked else { throw .locked(id.rawValue) }
        return try backend.access()
    }

    /// The collection whose password a change of alias `name` to `collection` (nil: removing
    /// it) needs: for `default`, the collection it names now, when the change would point it
    /// elsewhere and that collection's policy is not `open` (or cannot be read: it is
    /// locked). Applications that store into `default` would otherwise send their new secrets
    /// to a collection another program made with a password it knows, and read them from the
    /// file. Other aliases are an application's own names, and free.
    public func collectionGuarding(alias name: String, changedTo collection: CollectionID?) throws(CofferError) -> CollectionID? {
        guard name == Self.defaultAlias, let current = try resolveAlias(name), current != collection else { return nil }
        let backend = try self.collection(current)
        guard !backend.isLocked else { return current }
        return try backend.access().policy == .open ? nil : current
    }

    /// Changes collection `id`'s access rules with `change` (it must be unlocked), durably.
    @discardableResult
    public func updateAccess(of id: CollectionID,
                             _ change: (inout CollectionAccess) throws(CofferError) -> Void) throws(CofferError) -> CollectionAccess {
        let backend = try collection(id)
        guard !backend.isLocked else { throw .locked(id.rawValue) }
        return try backend.updateAccess(change)
    }

    /// The items of collection `id` a Secret Service `CreateItem` with `replace` would replace,
    /// as gnome-keyring and oo7 do: those whose attributes include `attributes` (with none
    /// given, only items without attributes, never the whole collection), by ascending id.
    public func replaceable(by attributes: Attributes, in id: CollectionID) throws(CofferError) -> [ItemReference] {
        try search(Query(attributes: attributes, collection: id, returnAttributes: attributes.isEmpty))
            .filter { !attributes.isEmpty || $0.metadata?.attributes.isEmpty == true }.map(\.reference)
            .sorted { $0.item < $1.item }
    }

    /// Whether `application` may do `action` to each of `references` now, under its
    /// collection's policy and grants (with the item's label), or why nothing can be decided:
    /// the collection is locked, the item is missing, the rules cannot be read. Only an
    /// `.allowed` decision lets a secret be read or an item be changed; an application's key
    /// (`ApplicationKey`) is `.reserved` to the Secret portal. `digest` computes the caller's
    /// executable digest if a grant needs it. Each collection's rules are read once for all
    /// its items.
    public func decide(_ action: AccessAction, of references: [ItemReference], by application: Application,
                       digest: () -> [UInt8]? = { nil }) -> [ItemDecision] {
        var decisions = [ItemDecision](repeating: .missing, count: references.count)
        for (id, positions) in references.positionsByCollection() {
            let backend: any CollectionBackend
            let access: CollectionAccess
            do throws(CofferError) {
                backend = try collection(id)
                guard !backend.isLocked else { throw .locked(id.rawValue) }
                access = try backend.access()
            } catch {
                let decision: ItemDecision = switch error {
                case .collectionNotFound: .missing
                case .locked: .locked(id)
                default: .rulesUnreadable("\(error)")
                }
                for position in positions { decisions[position] = decision }
                continue
            }
            // One look for all; when one of them cannot be read (damage), each is read alone,
            // so that only it fails.
            let found = try? backend.metadata(of: positions.map { references[$0].item })
            precondition(found.map { $0.count == positions.count } ?? true, "a backend's batch metadata has one entry per item")
            let now = Clock.now()
            for (index, position) in positions.enumerated() {
                let item = references[position].item
                do throws(CofferError) {
                    let metadata: ItemMetadata
                    if let found {
                        guard let known = found[index] else { continue }   // no such item: missing
                        metadata = known
                    } else {
                        metadata = try backend.metadata(of: item)
                    }
                    let decision = ApplicationKey.isKey(metadata.attributes) ? .reserved
                        : access.decide(application, action, item: item, creator: metadata.creator, at: now, digest: digest)
                    decisions[position] = .decided(decision, label: metadata.label)
                } catch .itemNotFound {
                    decisions[position] = .missing
                } catch .locked {
                    decisions[position] = .locked(id)
                } catch {
                    decisions[position] = .rulesUnreadable("\(error)")
                }
            }
        }
        return decisions
    }
}
