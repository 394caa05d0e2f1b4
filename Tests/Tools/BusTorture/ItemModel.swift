import DBusKit

/// Everything of an item the torture checks.
struct ItemState: Equatable, CustomStringConvertible {
    var label: String
    var attributes: [String: String]
    var secret: [UInt8]
    var contentType: String

    var description: String {
        let keys = attributes.keys.sorted().map { "\($0)=\(attributes[$0]!.prefix(20))" }.joined(separator: ",")
        return "label \(label.prefix(24).debugDescription), attributes [\(keys)], \(secret.count) secret bytes (\(contentType))"
    }
}

/// A write whose reply never came: its item must afterwards hold `before` or `after`, nothing else.
struct PendingWrite {
    /// The item it changes; nil for a CreateItem that makes a new item (path not known yet).
    var path: ObjectPath?
    var after: ItemState?
    var what: String
}

/// What a writer knows must be stored: the acknowledged state of each of its items, and the
/// one write that may be in flight.
struct ItemModel {
    private(set) var items: [ObjectPath: ItemState] = [:]
    private(set) var pending: PendingWrite?

    /// What a comparison with the store found.
    struct Findings {
        /// Acknowledged writes or deletes not (exactly) found.
        var lost: [String] = []
        /// In-flight writes half applied, and items nobody wrote.
        var broken: [String] = []
        /// Whether the in-flight write was applied (nil: there was none).
        var pendingApplied: Bool?
    }

    /// Records a write about to be sent.
    mutating func begin(_ write: PendingWrite) {
        precondition(pending == nil, "one write at a time")
        pending = write
    }

    /// Records the acknowledgement of the write in flight: `path` now holds its `after`.
    mutating func acknowledge(at path: ObjectPath) {
        guard let write = pending else { preconditionFailure("nothing in flight") }
        pending = nil
        items[path] = write.after
    }

    /// Compares the model with `actual` (this writer's items as the store holds them), then
    /// adopts `actual`, so that later writes build on what is really there.
    mutating func reconcile(with actual: [ObjectPath: ItemState]) -> Findings {
        var findings = Findings()
        let write = pending
        if write != nil { findings.pendingApplied = false }
        for (path, expected) in items.sorted(by: { $0.key < $1.key }) {
            let found = actual[path]
            if let write, write.path == path {
                if found == write.after {
                    findings.pendingApplied = true
                } else if found != expected {
                    findings.broken.append("\(write.what) at \(path), in flight at a kill, was half applied: "
                                           + "found \(Self.show(found)), expected \(expected) or \(Self.show(write.after))")
                }
            } else if found != expected {
                findings.lost.append("\(path): acknowledged \(expected), found \(Self.show(found))")
            }
        }
        var extras = Set(actual.keys).subtracting(items.keys)
        if let write, write.path == nil, let made = extras.first(where: { actual[$0] == write.after }) {
            findings.pendingApplied = true
            extras.remove(made)
        }
        for path in extras.sorted() {
            findings.broken.append("\(path) holds an item no write made: \(actual[path]!)")
        }
        items = actual
        pending = nil
        return findings
    }

    private static func show(_ state: ItemState?) -> String { state.map(\.description) ?? "no item" }
}
