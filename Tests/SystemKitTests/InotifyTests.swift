import SystemKit
import Testing

@Suite struct InotifyTests {
    @Test func reportsCreationModificationAndRemovalByName() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var inotify = try Inotify()
        defer { inotify.close() }
        let watch = try inotify.watch(directory.path, for: [.create, .modify, .delete, .deleteSelf])
        #expect(inotify.readEvents().isEmpty)

        let path = directory.path + "/entry"
        let file = try FileDescriptor.open(path, .writeOnly, options: .create)
        try file.writeAll([1, 2, 3])
        file.close()
        try FileSystem.remove(path)
        let events = inotify.readEvents()
        #expect(events.map(\.name) == ["entry", "entry", "entry"])
        #expect(events.allSatisfy { $0.watch == watch })
        #expect(events.map(\.events) == [.create, .modify, .delete])

        directory.remove()
        #expect(inotify.readEvents().contains { $0.events.contains(.deleteSelf) })
    }

    /// A read that leaves room in its buffer has drained the queue; one that filled it says
    /// that more may be queued, and the rest comes with the next reads.
    @Test func saysWhetherMoreEventsMayBeQueued() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var inotify = try Inotify()
        defer { inotify.close() }
        _ = try inotify.watch(directory.path, for: [.create])
        let names = (0..<100).map { "entry-with-a-rather-long-name-\($0)" }
        for name in names { try FileDescriptor.open(directory.path + "/" + name, .writeOnly, options: .create).close() }
        var seen: [String] = []
        var reads = 0
        repeat {
            seen += inotify.readEvents().map(\.name)
            reads += 1
        } while inotify.mayHaveMore
        #expect(reads > 1)
        #expect(seen == names)
        #expect(inotify.readEvents().isEmpty)

        try FileDescriptor.open(directory.path + "/one-more", .writeOnly, options: .create).close()
        #expect(inotify.readEvents().map(\.name) == ["one-more"])
        #expect(!inotify.mayHaveMore)
    }
}
