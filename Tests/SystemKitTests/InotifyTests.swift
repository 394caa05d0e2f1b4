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
}
