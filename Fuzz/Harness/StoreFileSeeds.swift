import CofferCore
import CofferCrypto
import CofferStore
import Foundation

/// Seeds for `StoreFileHarness`: collection files written by the store itself (password
/// `StoreFileHarness.password`, fast KDF parameters) after typical histories (one with batches
/// of several changes), a torn one, one with reserved space, and the decoders' own inputs (an item payload, an attribute index,
/// sync records).
enum StoreFileSeeds {
    static func all() throws -> [Seed] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-fuzz-seeds-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keychain = Keychain(provider: try FileStore(directory: directory, kdf: .testing, watchChanges: false,
                                                        warn: { _ in }))
        let password = try SecureBytes(Array(StoreFileHarness.password.utf8))
        func file(_ id: CollectionID) throws -> [UInt8] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(id.rawValue).coffer")))
            return Array(bytes[..<((bytes.lastIndex { $0 != 0 } ?? 0) + 1)])   // without the reserved space
        }
        func secret(_ text: String) throws -> Secret { Secret(bytes: try SecureBytes(Array(text.utf8))) }

        let empty = try keychain.createCollection(label: "Empty", id: CollectionID("empty"), password: password)
        let login = try keychain.createCollection(label: "Login", id: CollectionID("login"), password: password)
        try keychain.add(NewItem(label: "Git", attributes: ["service": "git", "account": "me"], secret: secret("one")), to: login)
        try keychain.add(NewItem(label: "Web", attributes: ["service": "web", "xdg:schema": "org.example.Password"],
                                 secret: secret("two")), to: login)
        let history = try keychain.createCollection(label: "History", id: CollectionID("history"), password: password)
        try keychain.add(NewItem(label: "A", attributes: ["n": "1"], secret: secret("a")), to: history)
        try keychain.add(NewItem(label: "B", attributes: ["n": "2"], secret: secret("b")), to: history)
        try keychain.update(Query(attributes: ["n": "1"]), with: ItemChanges(label: "A2", secret: try secret("a2")))
        try keychain.delete(Query(attributes: ["n": "2"]))
        try keychain.collection(history).setLabel("History 2")

        // Since 0.3: items that record their creator, and a collection with access rules.
        let python = Application(kind: .executable, name: "/usr/bin/python3")!
        let rules = try keychain.createCollection(label: "Rules", id: CollectionID("rules"), password: password, policy: .strict)
        try keychain.add(NewItem(label: "Made", attributes: ["n": "1"], secret: secret("m"), creator: python), to: rules)
        let grant = AccessGrant(application: Application(kind: .flatpak, name: "org.example.App")!, item: 1, granted: 1_700_000_000,
                                expires: 1_800_000_000, executableDigest: nil)
        try keychain.updateAccess(of: rules) { $0.add(grant, now: 1_700_000_000) }
        let access = CollectionAccess(policy: .ask, grants: [grant, AccessGrant(application: python, item: nil, granted: 1,
                                                                                 executableDigest: Array(repeating: 7, count: 32))])
        // Since 0.4: batches of several changes, ended by a commit record.
        let batches = try keychain.createCollection(label: "Batches", id: CollectionID("batches"), password: password)
        let added = try keychain.insertAll(try ["1", "2", "3"].map { NewItem(label: $0, attributes: ["n": $0], secret: try secret($0)) },
                                           into: batches)
        _ = try keychain.commit([.update(added[0].item, ItemChanges(label: "1b")), .remove(added[1].item)], in: batches)
        let twoItems = try file(login)
        let metadata = ItemMetadata(label: "Git", attributes: ["service": "git"], contentType: "text/plain",
                                    created: 1_700_000_000, modified: 1_700_000_001)
        let payload = try ItemPayload.encode(metadata, secret: try SecureBytes(Array("hunter2".utf8)))
        let hasher = try AttributeHasher(lookupKey: Array(repeating: 1, count: 32))
        // Since 0.5: the records of a synced collection's device files.
        let device = DeviceID(Array(repeating: 0xAB, count: 16))!
        let version = ChangeVersion(timestamp: HLCTimestamp(milliseconds: 1_800_000_000_000, counter: 3), device: device)
        let syncChange = SyncRecord.change(SyncChange(item: SyncItemID(Array(repeating: 1, count: 16))!, version: version,
                                                      replaces: [version], content: .item([1, 2, 3])))
        return [
            Seed(name: "store-empty", bytes: try file(empty)),
            Seed(name: "store-two-items", bytes: twoItems),
            Seed(name: "store-update-delete-relabel", bytes: try file(history)),
            Seed(name: "store-torn-tail", bytes: Array(twoItems.dropLast(9))),
            Seed(name: "store-reserved-space", bytes: twoItems + Array(repeating: 0, count: 64)),
            Seed(name: "item-payload", bytes: payload.withUnprotectedCopy { $0 }),
            Seed(name: "attribute-index", bytes: AttributeHasher.encode(hasher.terms(["service": "git", "account": "me"]))),
            Seed(name: "store-creators-and-rules", bytes: try file(rules)),
            Seed(name: "access-rules", bytes: AccessCoding.encode(access)),
            Seed(name: "store-batches", bytes: try file(batches)),
            Seed(name: "sync-record-change", bytes: syncChange.encoded()),
            Seed(name: "sync-record-merged", bytes: SyncRecord.merged([device: 4]).encoded()),
        ]
    }
}
