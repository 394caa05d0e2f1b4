import CofferCore
import CofferCrypto
import CofferStore
import CofferTestSupport
import Foundation
import Testing

/// Two or three devices — each its own store directory — syncing one collection through one
/// shared folder, with no sync tool between them (the Syncthing tests are in CofferdTests):
/// what the store and the folder do with local writes, other devices' changes, concurrent
/// edits, deletes and crashes.
@Suite struct CollectionSyncTests {
    static let password = "correct horse battery"
    static let work = CollectionID("work")!

    /// Devices sharing `folder`; the first enabled sync, the others joined.
    final class Devices {
        let fixtures: [StoreFixture]
        let shared: String
        var stores: [FileStore] = []
        var syncs: [CollectionSync] = []

        init(count: Int = 2) throws {
            fixtures = try (0..<count).map { _ in try StoreFixture() }
            shared = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-shared-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            stores = try fixtures.map { try $0.store() }
            // Each device its own collection, with its own password; the first device's opens the folder.
            let collections = try stores.enumerated().map { device, store in
                try #require(try store.create(CollectionSyncTests.work, label: "Work", password: try secure("password of device \(device)"),
                                              access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
            }
            let (first, folder) = try CollectionSync.enable(collections[0], directory: fixtures[0].directory, syncedFolder: shared,
                                                            password: try secure(CollectionSyncTests.password))
            syncs.append(first)
            for (device, collection) in collections.enumerated().dropFirst() {
                syncs.append(try CollectionSync.join(collection, directory: fixtures[device].directory, folder: folder,
                                                     password: try secure(CollectionSyncTests.password)))
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: shared) }

        /// The collection's own folder in the shared one.
        var folder: String {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: shared)) ?? []
            return "\(shared)/\(names.first ?? "")"
        }

        subscript(_ device: Int) -> FileCollection { syncs[device].collection }

        /// Every device syncs, twice round (so that what one exported the others have).
        func settle() throws {
            for _ in 0..<2 { for sync in syncs { try sync.sync() } }
        }

        /// Each device's items as (label, secret) pairs, sorted.
        func contents(_ device: Int) throws -> [String] {
            let collection = self[device]
            return try collection.itemIDs(matching: [:], limit: .all).map { id in
                let label = try collection.metadata(of: id).label
                let secret = try collection.secret(of: id).bytes.unprotectedString(0..<collection.secret(of: id).bytes.count)
                return "\(label)=\(secret)"
            }.sorted()
        }
    }

    static func secure(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    static func item(_ label: String, _ secret: String, attributes: Attributes = [:]) throws -> ItemChange {
        .insert(NewItem(label: label, attributes: attributes.isEmpty ? ["name": label] : attributes,
                        secret: Secret(bytes: try secure(secret), contentType: "text/plain")), onDuplicate: .allow)
    }

    static func update(_ id: ItemID, secret: String) throws -> ItemChange {
        .update(id, ItemChanges(secret: Secret(bytes: try secure(secret), contentType: "text/plain")))
    }

    @Test func aWriteOnOneDeviceIsReadableOnTheOther() throws {
        let devices = try Devices()
        let id = try #require(try devices[0].commit([Self.item("wifi", "hunter2", attributes: ["ssid": "home"])]).first?.id)
        #expect(try devices.syncs[0].sync().exported == 1)
        let round = try devices.syncs[1].sync()
        guard case .created(let copy, let label)? = round.applied.first else {
            Issue.record("nothing applied: \(round)")
            return
        }
        #expect(label == "wifi")
        #expect(try devices[1].metadata(of: copy).attributes == ["ssid": "home"])
        #expect(try devices.contents(1) == ["wifi=hunter2"])
        // Applied, it is not sent back as a change of the other device's.
        #expect(try devices.syncs[1].sync().exported == 0)
        #expect(try devices.syncs[0].sync().applied.isEmpty)
        // An update and a delete travel too.
        _ = try devices[1].commit([Self.update(copy, secret: "s3cret")])
        try devices.settle()
        #expect(try devices.contents(0) == ["wifi=s3cret"])
        _ = try devices[0].commit([.remove(id)])
        try devices.settle()
        #expect(try devices.contents(1) == [])
    }

    @Test func nothingInTheFolderIsInClear() throws {
        let devices = try Devices()
        _ = try devices[0].commit([Self.item("bank-label-zq", "secret-zq", attributes: ["user": "attribute-zq"])])
        try devices.settle()
        for name in try FileManager.default.contentsOfDirectory(atPath: devices.folder) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/\(name)"))
            for needle in ["bank-label-zq", "secret-zq", "attribute-zq", "user"] {
                #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) in \(name)")
            }
        }
        for fixture in devices.fixtures {
            let state = try Data(contentsOf: URL(fileURLWithPath: "\(fixture.directory)/work.sync"))
            #expect(state.range(of: Data("attribute-zq".utf8)) == nil)
        }
        // The folder's keys file holds only what the sync password opens: no TPM slot, no local key.
        let keys = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/collection.keys"))
        #expect(keys.count < 200)
    }

    @Test func anItemKeptOnOneDeviceNeverEntersTheFolder() throws {
        let devices = try Devices()
        let local = CollectionSync.localOnlyAttribute
        _ = try devices[0].commit([Self.item("kept-here-zq", "only-here-zq", attributes: ["n": "1", local.name: local.value])])
        let shared = try #require(try devices[0].commit([Self.item("shared", "s", attributes: ["n": "2"])]).first?.id)
        try devices.settle()
        #expect(try devices.contents(1) == ["shared=s"])
        for name in try FileManager.default.contentsOfDirectory(atPath: devices.folder) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/\(name)"))
            #expect(bytes.range(of: Data("only-here-zq".utf8)) == nil)
        }
        // Kept here from now on: it leaves the other device, and stays here.
        _ = try devices[0].commit([.update(shared, ItemChanges(attributes: ["n": "2", local.name: local.value]))])
        try devices.settle()
        #expect(try devices.contents(1) == [])
        #expect(try devices.contents(0) == ["kept-here-zq=only-here-zq", "shared=s"])
    }

    @Test func concurrentEditsConvergeOnTheNewestAndKeepTheLoser() throws {
        let devices = try Devices()
        let id = try #require(try devices[0].commit([Self.item("mail", "v0")]).first?.id)
        try devices.settle()
        let copy = try #require(try devices[1].itemIDs(matching: ["name": "mail"], limit: .all).first)
        _ = try devices[0].commit([Self.update(id, secret: "from-a")])
        _ = try devices[1].commit([Self.update(copy, secret: "from-b")])   // later: it wins
        try devices.settle()
        #expect(try devices.contents(0) == ["mail=from-b"])
        #expect(try devices.contents(1) == ["mail=from-b"])
        for sync in devices.syncs {
            let conflicts = try sync.conflicts()
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.label == "mail")
        }
        // The lost version comes back on both when restored, and is no conflict any more.
        let lost = try #require(try devices.syncs[1].conflicts().first)
        _ = try devices.syncs[1].restore(lost.reference)
        try devices.settle()
        #expect(try devices.contents(0) == ["mail=from-a"])
        #expect(try devices.contents(1) == ["mail=from-a"])
        #expect(try devices.syncs[0].conflicts().isEmpty)
    }

    @Test func aDeleteAgainstANewerEditKeepsTheItemAndAnOlderOneKeepsTheEdit() throws {
        let devices = try Devices()
        let first = try #require(try devices[0].commit([Self.item("edited-last", "v0")]).first?.id)
        let second = try #require(try devices[0].commit([Self.item("deleted-last", "v0")]).first?.id)
        try devices.settle()
        let copies = try ["edited-last", "deleted-last"].map { try #require(try devices[1].itemIDs(matching: ["name": $0], limit: .all).first) }
        // Device 0 deletes one item, then device 1, not having seen that, edits both...
        _ = try devices[0].commit([.remove(first)])
        try devices.syncs[0].sync()
        _ = try devices[1].commit([Self.update(copies[0], secret: "edited")])
        _ = try devices[1].commit([Self.update(copies[1], secret: "edited")])
        try devices.syncs[1].sync()
        // ... then device 0, not having seen the edits, deletes the other.
        _ = try devices[0].commit([.remove(second)])
        try devices.settle()
        #expect(try devices.contents(0) == ["edited-last=edited"])
        #expect(try devices.contents(1) == ["edited-last=edited"])
        // The edit that lost to a delete is kept, restorable.
        let conflicts = try devices.syncs[0].conflicts()
        #expect(conflicts.map(\.label) == ["deleted-last", nil])
    }

    @Test func changesMadeApartMergeWhenTheDevicesMeet() throws {
        let devices = try Devices(count: 3)
        for round in 0..<5 {
            for device in 0..<3 { _ = try devices[device].commit([Self.item("d\(device)-\(round)", "s\(round)")]) }
        }
        try devices.settle()
        let expected = (0..<3).flatMap { device in (0..<5).map { "d\(device)-\($0)=s\($0)" } }.sorted()
        for device in 0..<3 { #expect(try devices.contents(device) == expected) }
    }

    @Test func randomHistoriesConvergeOnEveryDevice() throws {
        var random = SeededGenerator(seed: 34)
        for _ in 0..<4 {
            let devices = try Devices(count: 3)
            for _ in 0..<40 {
                let device = Int.random(in: 0..<3, using: &random)
                let collection = devices[device]
                let items = try collection.itemIDs(matching: [:], limit: .all)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !items.isEmpty:
                    _ = try collection.commit([.remove(items.randomElement(using: &random)!)])
                case 1 where !items.isEmpty:
                    _ = try collection.commit([Self.update(items.randomElement(using: &random)!, secret: "u\(Int.random(in: 0..<1000, using: &random))")])
                case 2:
                    try devices.syncs[Int.random(in: 0..<3, using: &random)].sync()
                default:
                    _ = try collection.commit([Self.item("i\(Int.random(in: 0..<1000, using: &random))", "s")])
                }
            }
            try devices.settle()
            let first = try devices.contents(0)
            #expect(try devices.contents(1) == first)
            #expect(try devices.contents(2) == first)
            #expect(try Set(devices.syncs.map { try $0.conflicts().map(\.reference) }).count == 1)
        }
    }

    @Test func aDeviceWhoseOwnFileWasRemovedWritesItAnewAndTheOthersReadIt() throws {
        let devices = try Devices()
        _ = try devices[0].commit([Self.item("first", "1")])
        try devices.settle()
        try FileManager.default.removeItem(atPath: "\(devices.folder)/\(try Self.state(devices, 0)).csync")
        _ = try devices[0].commit([Self.item("second", "2")])
        let restarted = CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory)
        try restarted.sync()
        devices.syncs[0] = restarted
        try devices.settle()
        #expect(try devices.contents(1) == ["first=1", "second=2"])
        #expect(try devices.syncs[1].sync().problems.isEmpty)
    }

    @Test func aLocalChangeNotYetExportedGoesOutAfterARestart() throws {
        let devices = try Devices()
        _ = try devices[0].commit([Self.item("written-before-a-crash", "x")])
        // A new process: the first round compares the whole store with the sync state.
        let restarted = CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory)
        #expect(try restarted.sync().exported == 1)
        try devices.syncs[1].sync()
        #expect(try devices.contents(1) == ["written-before-a-crash=x"])
    }

    @Test func anAppliedChangeDoesNotOverwriteALocalChangeMadeMeanwhile() throws {
        let devices = try Devices()
        let id = try #require(try devices[0].commit([Self.item("token", "v0")]).first?.id)
        try devices.settle()
        let copy = try #require(try devices[1].itemIDs(matching: ["name": "token"], limit: .all).first)
        _ = try devices[0].commit([Self.update(id, secret: "older")])
        try devices.syncs[0].sync()
        // Device 1 changes the item after device 0's change: newer, so it must win everywhere.
        _ = try devices[1].commit([Self.update(copy, secret: "newer")])
        try devices.settle()
        #expect(try devices.contents(0) == ["token=newer"])
        #expect(try devices.contents(1) == ["token=newer"])
    }

    @Test func aDamagedDeviceFileIsReportedAndHoldsUpNoOther() throws {
        let devices = try Devices(count: 3)
        _ = try devices[1].commit([Self.item("from-1", "a")])
        _ = try devices[2].commit([Self.item("from-2", "b")])
        try devices.syncs[1].sync()
        try devices.syncs[2].sync()
        // Device 1's file: one byte of its record changed.
        let device1 = "\(try Self.state(devices, 1)).csync"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/\(device1)"))
        bytes[bytes.count - 3] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: "\(devices.folder)/\(device1)"))
        let round = try devices.syncs[0].sync()
        #expect(round.problems.count == 1)
        #expect(round.problems.first?.contains("set aside") == true)
        #expect(try devices.contents(0) == ["from-2=b"])
    }

    @Test func aRemovedDeviceReadsNothingChangedAfterItsRemoval() throws {
        let devices = try Devices(count: 3)
        _ = try devices[0].commit([Self.item("before", "b")])
        try devices.settle()
        let removed = try Self.state(devices, 2)
        let oldFolder = devices.folder
        let newFolder = try devices.syncs[0].removeDevice(String("\(removed)".prefix(8)), newPassword: try Self.secure("new sync password"))
        #expect(newFolder != oldFolder)
        // The others are told where the collection went, and join it with the new password,
        // their items matched by content, not doubled.
        let notice = try devices.syncs[1].sync().problems
        #expect(notice.contains { $0.contains("removed machine \(removed)") && $0.contains(newFolder) }, "\(notice)")
        #expect(throws: CofferError.authenticationFailed) {
            _ = try CollectionSync.join(devices[2], directory: devices.fixtures[2].directory, folder: newFolder,
                                        password: try Self.secure(Self.password))
        }
        devices.syncs[1] = try CollectionSync.join(devices[1], directory: devices.fixtures[1].directory, folder: newFolder,
                                                   password: try Self.secure("new sync password"))
        _ = try devices[0].commit([Self.item("after", "a")])
        _ = try devices[2].commit([Self.item("from-the-removed", "r")])
        for _ in 0..<2 { for device in 0..<2 { try devices.syncs[device].sync() } }
        try devices.syncs[2].sync()
        #expect(try devices.contents(0) == ["after=a", "before=b"])
        #expect(try devices.contents(1) == ["after=a", "before=b"])
        #expect(try devices.contents(2) == ["before=b", "from-the-removed=r"])
        // Its old file put into the new folder is set aside, never merged.
        let file = "\(removed).csync"
        try FileManager.default.copyItem(atPath: "\(oldFolder)/\(file)", toPath: "\(newFolder)/\(file)")
        let round = try devices.syncs[0].sync()
        #expect(round.problems.contains { $0.contains("\(removed)") && $0.contains("set aside") }, "\(round.problems)")
        #expect(try devices.contents(0) == ["after=a", "before=b"])
    }

    /// Device `device`'s own file: its size, and its generation (from its header).
    static func ownFile(_ devices: Devices, _ device: Int) throws -> (size: Int, generation: UInt32) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/\(try state(devices, device)).csync"))
        let generation = bytes[42...45].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        return (bytes.count, generation)
    }

    /// Every device syncing with `merged` records at every round, so that compaction can be seen.
    static func eager(_ devices: Devices) {
        devices.syncs = devices.syncs.enumerated().map { device, sync in
            CollectionSync(collection: sync.collection, directory: devices.fixtures[device].directory, publishInterval: 0)
        }
    }

    @Test func aDeviceDropsFromItsOwnFileWhatEveryDeviceHasSeenSuperseded() throws {
        let devices = try Devices(count: 3)
        Self.eager(devices)
        let id = try #require(try devices[0].commit([Self.item("token", "v0")]).first?.id)
        try devices.settle()
        // Device 2 falls behind: nothing it has not seen is dropped.
        for version in 1...40 {
            _ = try devices[0].commit([Self.update(id, secret: "v\(version)")])
            for device in 0..<2 { try devices.syncs[device].sync() }
        }
        for device in 0..<2 { try devices.syncs[device].sync() }
        #expect(try Self.ownFile(devices, 0).generation == 0)
        let grown = try Self.ownFile(devices, 0).size
        // Once it has caught up and said so, the superseded versions go (at the next look).
        for version in 41...80 {
            _ = try devices[0].commit([Self.update(id, secret: "v\(version)")])
            try devices.settle()
        }
        let compacted = try Self.ownFile(devices, 0)
        #expect(compacted.generation >= 1)
        // Smaller now, with 40 more versions made, than when it held 41.
        #expect(compacted.size < grown, "\(compacted.size) bytes, \(grown) before")
        for device in 0..<3 { #expect(try devices.contents(device) == ["token=v80"]) }
        // A device joining now gets the item as it is.
        let late = try StoreFixture()
        let collection = try #require(try late.store().create(Self.work, label: "Work", password: try Self.secure("x"),
                                                              access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
        _ = try CollectionSync.join(collection, directory: late.directory, folder: devices.folder, password: try Self.secure(Self.password))
        #expect(try collection.itemIDs(matching: [:], limit: .all).count == 1)
        #expect(try devices.syncs.allSatisfy { try $0.conflicts().isEmpty })
    }

    @Test func tombstonesGoOnceNothingElseIsLeftOfTheirItems() throws {
        let devices = try Devices(count: 2)
        Self.eager(devices)
        _ = try devices[1].commit(try (0..<40).map { try Self.item("gone-\($0)", "s") })
        _ = try devices[1].commit([Self.item("stays", "s")])
        try devices.settle()
        let copies = try devices[0].itemIDs(matching: [:], limit: .all).filter { try devices[0].metadata(of: $0).label != "stays" }
        _ = try devices[0].commit(copies.map { .remove($0) })
        for round in 0..<40 {   // rounds go on: more items come and go on device 1, nothing of them lasts
            _ = try devices[1].commit([Self.item("passing-\(round)", "s")])
            try devices.settle()
            let passing = try devices[1].itemIDs(matching: ["name": "passing-\(round)"], limit: .all)
            _ = try devices[1].commit(passing.map { .remove($0) })
            try devices.settle()
        }
        // Device 1 dropped its creations (superseded by the deletions), device 0 then its
        // tombstones: a device joining now reads nothing of those items.
        #expect(try Self.ownFile(devices, 1).generation >= 1)
        #expect(try Self.ownFile(devices, 0).generation >= 1)
        let late = try StoreFixture()
        let collection = try #require(try late.store().create(Self.work, label: "Work", password: try Self.secure("x"),
                                                              access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
        let joined = try CollectionSync.join(collection, directory: late.directory, folder: devices.folder,
                                             password: try Self.secure(Self.password))
        #expect(try collection.itemIDs(matching: [:], limit: .all).count == 1)
        #expect(try joined.conflicts().isEmpty)
        for device in 0..<2 { #expect(try devices.contents(device) == ["stays=s"]) }
    }

    @Test func twoDevicesUnderOneIdAreReportedAndBothKeepTheirChanges() throws {
        let devices = try Devices()
        _ = try devices[1].commit([Self.item("before", "b")])
        try devices.settle()
        // Device 1's store is restored on another machine from a backup made now.
        let clone = try StoreFixture()
        try FileManager.default.copyItem(atPath: devices.fixtures[1].directory, toPath: clone.directory)
        let shared = "\(devices.folder)/\(try Self.state(devices, 1)).csync"
        let backup = try Data(contentsOf: URL(fileURLWithPath: shared))
        _ = try devices[1].commit([Self.item("from-the-original", "o")])
        try devices.syncs[1].sync()
        // The sync tool keeps the original's file as a conflicting copy when the clone writes.
        try FileManager.default.moveItem(atPath: shared, toPath: shared.replacingOccurrences(of: ".csync", with: ".sync-conflict-20261129-010000-ABCDEFG.csync"))
        try backup.write(to: URL(fileURLWithPath: shared))
        let restored = try clone.store().fileCollection(Self.work)
        try restored.unlock(password: try Self.secure("password of device 1"))
        _ = try restored.commit([Self.item("from-the-clone", "c")])
        try CollectionSync(collection: restored, directory: clone.directory).sync()
        let round = try devices.syncs[0].sync()
        #expect(round.problems.contains { $0.contains("two devices share an id") }, "\(round.problems)")
        #expect(try devices.contents(0) == ["before=b", "from-the-clone=c", "from-the-original=o"])
    }

    @Test func aDeviceFileRolledBackBringsNothingBackAnywhere() throws {
        let devices = try Devices()
        _ = try devices[1].commit([Self.item("gone", "g"), Self.item("rotated", "old")])
        try devices.settle()
        let path = "\(devices.folder)/\(try Self.state(devices, 1)).csync"
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let gone = try #require(try devices[1].itemIDs(matching: ["name": "gone"], limit: .all).first)
        let rotated = try #require(try devices[1].itemIDs(matching: ["name": "rotated"], limit: .all).first)
        _ = try devices[1].commit([.remove(gone), Self.update(rotated, secret: "new")])
        try devices.settle()
        #expect(try devices.contents(0) == ["rotated=new"])
        // Device 1's file put back as it was before (a backup, or someone with the folder).
        try before.write(to: URL(fileURLWithPath: path))
        let restarted = CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory)
        let round = try restarted.sync()
        #expect(round.problems.contains { $0.contains("went back") }, "\(round.problems)")
        #expect(try devices.contents(0) == ["rotated=new"])
        devices.syncs[0] = restarted
        // Device 1 makes its file anew; nothing comes back, here, there, or for a device joining now.
        try devices.settle()
        try devices.settle()
        #expect(try devices.contents(0) == ["rotated=new"])
        #expect(try devices.contents(1) == ["rotated=new"])
        let late = try StoreFixture()
        let collection = try #require(try late.store().create(Self.work, label: "Work", password: try Self.secure("x"),
                                                              access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
        _ = try CollectionSync.join(collection, directory: late.directory, folder: devices.folder, password: try Self.secure(Self.password))
        let ids = try collection.itemIDs(matching: [:], limit: .all)
        #expect(ids.count == 1)
        #expect(try ids.first.map { try collection.secret(of: $0).bytes.unprotectedString(0..<3) } == "new")
    }

    @Test func bytesAfterADevicesLastRecordAreSetAsideAndItsChangesFlowOn() throws {
        let devices = try Devices()
        let path = "\(devices.folder)/\(try Self.state(devices, 1)).csync"
        // Four bytes claiming a record of a megabyte, which would never arrive.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x00, 0x00, 0x0f, 0x00]))
        try handle.close()
        _ = try devices[1].commit([Self.item("after", "a")])
        let round = try devices.syncs[1].sync()
        #expect(round.problems.contains { $0.contains("made anew") && $0.contains("set-aside") }, "\(round.problems)")
        try devices.settle()
        #expect(try devices.contents(0) == ["after=a"])
        #expect(try devices.syncs[0].sync().problems.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: devices.folder).contains { $0.contains(".set-aside-") })
    }

    @Test func aHugeOrSpecialFileUnderADeviceNameIsSetAsideWithoutBeingReadWhole() throws {
        let devices = try Devices()
        let header = try Data(contentsOf: URL(fileURLWithPath: "\(devices.folder)/\(try Self.state(devices, 0)).csync")).prefix(46)
        let fake = DeviceID(Array(repeating: 0x7e, count: 16))!
        var forged = Data(header)
        forged.replaceSubrange(26..<42, with: fake.bytes)
        let huge = "\(devices.folder)/\(fake).csync"
        try forged.write(to: URL(fileURLWithPath: huge))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: 4 << 30)   // sparse: 4 GiB of zeros after the header
        try handle.close()
        let fifo = DeviceID(Array(repeating: 0x7f, count: 16))!
        #expect(mkfifo("\(devices.folder)/\(fifo).csync", 0o600) == 0)
        _ = try devices[1].commit([Self.item("still", "s")])
        try devices.syncs[1].sync()
        let round = try devices.syncs[0].sync()
        #expect(round.problems.contains { $0.contains("\(fake)") && $0.contains("claims 0 bytes") }, "\(round.problems)")
        #expect(round.problems.contains { $0.contains("\(fifo)") && $0.contains("not a regular file") }, "\(round.problems)")
        #expect(try devices.contents(0) == ["still=s"])
    }

    @Test func aStoreRestoredFromABackupBringsNothingBackOnceTheDeletionIsCollected() throws {
        let devices = try Devices()
        Self.eager(devices)
        let x = try #require(try devices[0].commit([Self.item("x", "secret-x")]).first?.id)
        let f = try #require(try devices[0].commit([Self.item("f", "f0")]).first?.id)
        try devices.settle()
        let backup = try StoreFixture()
        try FileManager.default.copyItem(atPath: devices.fixtures[1].directory, toPath: backup.directory)
        _ = try devices[0].commit([.remove(x)])
        try devices.settle()
        for version in 1...80 {   // device 0's file compacts: x's creation, then its tombstone, go
            _ = try devices[0].commit([Self.update(f, secret: "f\(version)")])
            try devices.settle()
        }
        // Device 1's machine is put back from the backup (and goes on from there).
        let restored = try backup.store().fileCollection(Self.work)
        try restored.unlock(password: try Self.secure("password of device 1"))
        let sync = CollectionSync(collection: restored, directory: backup.directory, publishInterval: 0)
        try sync.sync()
        try devices.syncs[0].sync()
        try sync.sync()
        #expect(try devices.contents(0) == ["f=f80"])
        let back = try restored.itemIDs(matching: [:], limit: .all).map { try restored.metadata(of: $0).label }
        #expect(back == ["f"])
    }

    @Test func anotherDevicesFileMissingForAWhileLosesNoneOfItsChanges() throws {
        let devices = try Devices()
        let x = try #require(try devices[0].commit([Self.item("x", "old")]).first?.id)
        try devices.settle()
        _ = try devices[0].commit([Self.update(x, secret: "new")])
        try devices.syncs[0].sync()
        // Device 0's file is away (a sync tool replacing it) when device 1 starts a session.
        let path = "\(devices.folder)/\(try Self.state(devices, 0)).csync"
        try FileManager.default.moveItem(atPath: path, toPath: path + ".away")
        let restarted = CollectionSync(collection: devices[1], directory: devices.fixtures[1].directory)
        #expect(try restarted.sync().exported == 0)
        try FileManager.default.moveItem(atPath: path + ".away", toPath: path)
        devices.syncs[1] = restarted
        try devices.settle()
        #expect(try devices.contents(0) == ["x=new"])
        #expect(try devices.contents(1) == ["x=new"])
        #expect(try devices.syncs[1].conflicts().isEmpty)
    }

    @Test func aDeviceFileSetAsideIsReadAgainOnceItsDeviceMakesItAnew() throws {
        let devices = try Devices()
        let path = "\(devices.folder)/\(try Self.state(devices, 1)).csync"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0xff, 0xff, 0xff, 0xff, 1, 2, 3]))
        try handle.close()
        #expect(try devices.syncs[0].sync().problems.contains { $0.contains("set aside") })
        // Device 1 makes its file anew; device 0, in the same session (a running cofferd), reads it.
        _ = try devices[1].commit([Self.item("after", "a")])
        try devices.syncs[1].sync()
        let round = try devices.syncs[0].sync()
        #expect(round.problems.isEmpty, "\(round.problems)")
        #expect(try devices.contents(0) == ["after=a"])
    }

    @Test func aDevicesOwnFilePutBackFromACopyOneRoundOldIsSeen() throws {
        let devices = try Devices()
        let path = "\(devices.folder)/\(try Self.state(devices, 0)).csync"
        let copy = try Data(contentsOf: URL(fileURLWithPath: path))
        _ = try devices[0].commit([Self.item("written", "w")])
        try CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory).sync()   // one CLI round
        try copy.write(to: URL(fileURLWithPath: path))
        let round = try CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory).sync()
        #expect(round.problems.contains { $0.contains("made anew") }, "\(round.problems)")
        try devices.syncs[1].sync()
        #expect(try devices.contents(1) == ["written=w"])
    }

    @Test func aDeviceFileCutToItsHeaderWentBack() throws {
        let devices = try Devices()
        _ = try devices[1].commit([Self.item("kept", "k")])
        try devices.settle()
        let path = "\(devices.folder)/\(try Self.state(devices, 1)).csync"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 46)
        try handle.close()
        let round = try CollectionSync(collection: devices[0], directory: devices.fixtures[0].directory).sync()
        #expect(round.problems.contains { $0.contains("went back") }, "\(round.problems)")
        #expect(try devices.contents(0) == ["kept=k"])
    }

    @Test func joiningWithAWrongPasswordChangesNothing() throws {
        let devices = try Devices()
        let other = try StoreFixture()
        let collection = try #require(try other.store().create(Self.work, label: "Work", password: try Self.secure("x"),
                                                               access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
        #expect(throws: CofferError.authenticationFailed) {
            _ = try CollectionSync.join(collection, directory: other.directory, folder: devices.folder, password: try Self.secure("wrong"))
        }
        #expect(try SyncState.peek(directory: other.directory, id: Self.work) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: devices.folder).count == 3)   // keys and two devices' files
    }

    @Test func itemsADeviceHadBeforeJoiningGoToTheOthers() throws {
        let devices = try Devices()
        let other = try StoreFixture()
        let collection = try #require(try other.store().create(Self.work, label: "Work", password: try Self.secure("x"),
                                                               access: CollectionAccess(policy: .forNewCollections)) as? FileCollection)
        _ = try collection.commit([Self.item("had-before", "b")])
        _ = try devices[0].commit([Self.item("synced", "a")])
        try devices.syncs[0].sync()
        let joined = try CollectionSync.join(collection, directory: other.directory, folder: devices.folder,
                                             password: try Self.secure(Self.password))
        try devices.settle()
        #expect(try devices.contents(0) == ["had-before=b", "synced=a"])
        #expect(try collection.itemIDs(matching: [:], limit: .all).count == 2)
        #expect(try joined.sync().applied.isEmpty)
    }

    static func state(_ devices: Devices, _ device: Int) throws -> DeviceID {
        try #require(try SyncState.peek(directory: devices.fixtures[device].directory, id: work)).device
    }
}
