import CofferCore
import CofferCrypto
@testable import CofferStore
import Foundation
import Testing

/// A device's file of changes in a synced folder: what it appends reads back on every device
/// that has the collection's key; a record cut short is waited for; a changed, moved or
/// foreign record, or a file without the key, is damage that stops the read there.
@Suite struct SyncDeviceFileTests {
    static let uuid = Array(repeating: UInt8(7), count: 16)
    static let a = DeviceID(Array(repeating: 0xAA, count: 16))!
    static let b = DeviceID(Array(repeating: 0xBB, count: 16))!

    /// A folder with an empty file for each of devices A and B.
    static func twoDevices() throws -> (StoreFixture, SyncDeviceFile, SyncDeviceFile) {
        let fixture = try StoreFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        let files = [a, b].map { SyncDeviceFile(folder: fixture.directory, collection: uuid, device: $0) }
        for file in files { try file.create() }
        return (fixture, files[0], files[1])
    }

    static func keys(_ byte: UInt8 = 1) throws -> SyncKeys { try SyncKeys(folderKey: SecureBytes(Array(repeating: byte, count: 32))) }

    /// `count` changes of fresh items by `device`, their contents sealed with `keys`.
    static func changes(_ count: Int, by device: DeviceID, keys: SyncKeys) throws -> [SyncRecord] {
        try (0..<count).map { index in
            let item = SyncItemID(Array(repeating: UInt8(index), count: 16))!
            let version = ChangeVersion(timestamp: HLCTimestamp(milliseconds: 1000 + UInt64(index), counter: 0), device: device)
            let content = try keys.sealContent(try SecureBytes(Array("secret \(index)".utf8)), item: item, version: version)
            return .change(SyncChange(item: item, version: version, replaces: [], content: .item(content)))
        }
    }

    @Test func whatADeviceAppendsReadsBackAndItsContentsOpen() throws {
        let fixture = try StoreFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        let keys = try Self.keys()
        let file = SyncDeviceFile(folder: fixture.directory, collection: Self.uuid, device: Self.a)
        try file.create()
        let records = try Self.changes(3, by: Self.a, keys: keys)
        try file.append(Array(records[..<2]), first: 0, sequence: 0, keys: keys)
        try file.append([records[2], .merged([Self.b: 5])], first: 2, sequence: 2, keys: keys)
        let contents = try file.read(keys: keys)
        #expect(contents.problem == nil)
        #expect(contents.records.map(\.record) == records + [.merged([Self.b: 5])])
        guard case .change(let change) = contents.records[1].record, case .item(let sealed) = change.content else { Issue.record(); return }
        let opened = try keys.openContent(sealed, item: change.item, version: change.version)
        #expect(opened.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } == "secret 1")
        // No secret is in the file in clear.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file.path))
        #expect(bytes.range(of: Data("secret".utf8)) == nil)

        // Reading on from where a read ended gives only what came after.
        try file.append(try Self.changes(1, by: Self.a, keys: keys), first: 4, sequence: 4, keys: keys)
        let more = try file.read(from: contents.end, first: UInt64(contents.records.count), keys: keys)
        #expect(more.records.count == 1 && more.problem == nil)
    }

    @Test func aRecordCutShortIsWaitedForAndAChangedOneIsDamage() throws {
        let fixture = try StoreFixture()
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        let keys = try Self.keys()
        let file = SyncDeviceFile(folder: fixture.directory, collection: Self.uuid, device: Self.a)
        try file.create()
        try file.append(try Self.changes(3, by: Self.a, keys: keys), first: 0, sequence: 0, keys: keys)
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)))

        // Cut inside the last record: the two before it read, the rest is awaited.
        try Data(whole.dropLast(5)).write(to: URL(fileURLWithPath: file.path))
        let cut = try file.read(keys: keys)
        #expect(cut.records.count == 2 && cut.problem == .incompleteTail)

        // A byte changed in the second record: the first reads, then damage.
        let h = SyncDeviceFile.headerLength
        let firstLength = 4 + Int(UInt32(whole[h]) | UInt32(whole[h + 1]) << 8)
        var changed = whole
        changed[h + firstLength + 4 + 30] ^= 1
        try Data(changed).write(to: URL(fileURLWithPath: file.path))
        let damaged = try file.read(keys: keys)
        guard case .damaged = damaged.problem else { Issue.record("\(String(describing: damaged.problem))"); return }
        #expect(damaged.records.count == 1)

        // Another collection's key opens nothing.
        try Data(whole).write(to: URL(fileURLWithPath: file.path))
        let foreign = try file.read(keys: try Self.keys(2))
        #expect(foreign.records.isEmpty)
        guard case .damaged = foreign.problem else { Issue.record(); return }
    }

    @Test func aFileOrRecordMovedFromAnotherDeviceIsDamage() throws {
        let (fixture, fileA, fileB) = try Self.twoDevices()
        defer { withExtendedLifetime(fixture) {} }
        let keys = try Self.keys()
        try fileA.append(try Self.changes(2, by: Self.a, keys: keys), first: 0, sequence: 0, keys: keys)
        try fileB.append(try Self.changes(2, by: Self.b, keys: keys), first: 0, sequence: 0, keys: keys)
        let bytesA = Array(try Data(contentsOf: URL(fileURLWithPath: fileA.path)))
        let bytesB = Array(try Data(contentsOf: URL(fileURLWithPath: fileB.path)))

        // A's file copied over B's (a header of another device).
        try Data(bytesA).write(to: URL(fileURLWithPath: fileB.path))
        guard case .damaged = try fileB.read(keys: keys).problem else { Issue.record(); return }
        // A's records behind B's header: they were sealed for A's file.
        try Data(Array(bytesB[..<SyncDeviceFile.headerLength]) + bytesA[SyncDeviceFile.headerLength...])
            .write(to: URL(fileURLWithPath: fileB.path))
        let moved = try fileB.read(keys: keys)
        #expect(moved.records.isEmpty)
        guard case .damaged = moved.problem else { Issue.record(); return }
        // A's two records swapped: each was sealed for its position.
        let first = 4 + Int(UInt32(bytesA[SyncDeviceFile.headerLength]) | UInt32(bytesA[SyncDeviceFile.headerLength + 1]) << 8)
        let records = Array(bytesA[SyncDeviceFile.headerLength...])
        let swapped = Array(bytesA[..<SyncDeviceFile.headerLength]) + records[first...] + records[..<first]
        try Data(swapped).write(to: URL(fileURLWithPath: fileA.path))
        #expect(try fileA.read(keys: keys).records.isEmpty)
    }
}

/// The folder as a device reads it: every device's file merged, read on from where it ended;
/// a damaged file or a sync tool's conflicting copy reported without holding up the others.
@Suite struct SyncFolderTests {
    @Test func devicesFilesAreMergedAndReadOnAndDamageIsSetAside() throws {
        let (fixture, a, b) = try SyncDeviceFileTests.twoDevices()
        let keys = try SyncDeviceFileTests.keys()
        let recordsA = try SyncDeviceFileTests.changes(2, by: SyncDeviceFileTests.a, keys: keys)
        try a.append(recordsA, first: 0, sequence: 0, keys: keys)
        var folder = SyncFolder(path: fixture.directory, collection: SyncDeviceFileTests.uuid, keys: keys)
        #expect(try folder.refresh().count == 2)
        #expect(try folder.refresh().isEmpty)   // nothing new

        // B edits A's first item, after seeing it, and says how far it merged A's file.
        guard case .change(let first) = recordsA[0] else { Issue.record(); return }
        let edit = SyncChange(item: first.item, version: ChangeVersion(timestamp: HLCTimestamp(milliseconds: 5000, counter: 0),
                                                                         device: SyncDeviceFileTests.b),
                              replaces: [first.version], content: .deleted)
        try b.append([.change(edit), .merged([SyncDeviceFileTests.a: 2])], first: 0, sequence: 0, keys: keys)
        #expect(try folder.refresh() == [first.item])
        #expect(folder.items[first.item]?.exists == false)
        #expect(folder.mergedBy[SyncDeviceFileTests.b] == [SyncDeviceFileTests.a: 2])

        // B's file damaged from here on: reported, and A's later records still merge.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: b.path)))
        try b.append(try SyncDeviceFileTests.changes(1, by: SyncDeviceFileTests.b, keys: keys), first: 2, sequence: 2, keys: keys)
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: b.path)))
        bytes[bytes.count - 20] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: b.path))
        let laterA = try SyncDeviceFileTests.changes(4, by: SyncDeviceFileTests.a, keys: keys).suffix(2)
        try a.append(Array(laterA), first: 2, sequence: 2, keys: keys)
        #expect(try folder.refresh().count == 2)
        #expect(folder.damaged[SyncDeviceFileTests.b] != nil)
        #expect(folder.damaged[SyncDeviceFileTests.a] == nil)
        #expect(folder.items.count == 4)

        // A sync tool's conflicting copy (two devices writing as A) is reported.
        try Data(bytes).write(to: URL(fileURLWithPath: a.path + ".sync-conflict-20261128-120000-ABCDEFG.csync"))
        _ = try folder.refresh()
        #expect(folder.conflictingCopies.count == 1)
    }
}
