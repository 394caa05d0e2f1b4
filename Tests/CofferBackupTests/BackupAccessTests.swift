import CofferBackup
import CofferCore
import CofferCrypto
import Testing

/// A collection's access rules into a backup (items by position) and back (items by their new
/// ids), new or merged.
struct BackupAccessTests {
    static let fractal = Application(encoded: "flatpak:org.gnome.Fractal")!
    static let tool = Application(encoded: "/usr/bin/tool")!

    static func collection(items: Int) throws -> Backup.Collection {
        Backup.Collection(id: .login, label: "Login", created: 1, modified: 2, items: try (0..<items).map {
            Backup.Item(label: "\($0)", attributes: [:], secret: Secret(bytes: try SecureBytes([UInt8($0)])), created: 3, modified: 4)
        }, policy: nil)
    }

    @Test func grantsAreKeptByPositionAndThoseCoveringNothingAreLeftOut() throws {
        var collection = try Self.collection(items: 3)
        let access = CollectionAccess(policy: .strict, grants: [
            AccessGrant(application: Self.fractal, item: 30, granted: 10, expires: 1_000),
            AccessGrant(application: Self.tool, item: nil, granted: 11, executableDigest: [UInt8](repeating: 7, count: 32)),
            AccessGrant(application: Self.tool, item: 99, granted: 12),           // its item is gone
            AccessGrant(application: Self.fractal, item: 10, granted: 13, expires: 500),  // expired
        ])
        collection.keep(access, itemIDs: [10, 20, 30], now: 600)
        #expect(collection.policy == .strict)
        #expect(collection.grants == [
            .init(application: Self.fractal, item: 2, granted: 10, expires: 1_000),
            .init(application: Self.tool, item: nil, granted: 11, executableDigest: [UInt8](repeating: 7, count: 32)),
        ])
    }

    @Test func intoANewCollectionEveryGrantIsRepointed() throws {
        var collection = try Self.collection(items: 2)
        collection.grants = [.init(application: Self.fractal, item: 1, granted: 5, expires: 9), .init(application: Self.tool, item: nil, granted: 6)]
        #expect(collection.restoredGrants(itemIDs: [7, 8], intoNewCollection: true) == [
            AccessGrant(application: Self.fractal, item: 8, granted: 5, expires: 9),
            AccessGrant(application: Self.tool, item: nil, granted: 6),
        ])
    }

    @Test func mergedGrantsCoverOnlyTheItemsImported() throws {
        var collection = try Self.collection(items: 3)
        collection.grants = [
            .init(application: Self.fractal, item: 0, granted: 5),   // item 0 was there already
            .init(application: Self.fractal, item: 2, granted: 5),
            .init(application: Self.tool, item: nil, granted: 6),
        ]
        #expect(collection.restoredGrants(itemIDs: [nil, 41, 42], intoNewCollection: false) == [
            AccessGrant(application: Self.fractal, item: 42, granted: 5),
            AccessGrant(application: Self.tool, item: 41, granted: 6),
            AccessGrant(application: Self.tool, item: 42, granted: 6),
        ])
        #expect(collection.restoredGrants(itemIDs: [nil, nil, nil], intoNewCollection: false).isEmpty)
    }
}
