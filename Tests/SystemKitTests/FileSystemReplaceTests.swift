import Foundation
import SystemKit
import Testing

/// `FileSystem.replace`: the new file in place, whole and private, or the old one untouched;
/// never a temporary file left behind.
@Suite struct FileSystemReplaceTests {
    static func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    @Test func replacesAnExistingFileWithAPrivateOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/backup"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old contents, longer than the new".utf8),
                                               attributes: [.posixPermissions: 0o644]))
        try FileSystem.replace(path, with: Array("new".utf8), permissions: 0o600)
        #expect(try FileSystem.contents(of: path) == Array("new".utf8))
        #expect(try Self.mode(path) == 0o600)
        #expect(try FileSystem.names(in: directory.path) == ["backup"])
    }

    @Test func createsAMissingFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/new"
        try FileSystem.replace(path, with: [1, 2, 3], permissions: 0o640)
        #expect(try FileSystem.contents(of: path) == [1, 2, 3])
        #expect(try Self.mode(path) == 0o640)
        #expect(try FileSystem.names(in: directory.path) == ["new"])
    }

    /// The last step fails (a directory cannot be renamed over): what was there stays, and the
    /// fully written new file is removed.
    @Test func aFailureLeavesWhatWasThereAndNoTemporary() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/taken"
        try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        #expect(throws: Errno(EISDIR)) { try FileSystem.replace(path, with: Array("new".utf8), permissions: 0o600) }
        #expect(try FileSystem.names(in: directory.path) == ["taken"])
        #expect(try FileSystem.names(in: path) == ["inside"])
    }

    /// A link at the path is replaced, not followed: the file it pointed at is untouched.
    @Test func aLinkIsReplacedNotFollowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.path + "/elsewhere"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8)))
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link", withDestinationPath: target)
        try FileSystem.replace(directory.path + "/link", with: Array("new".utf8), permissions: 0o600)
        #expect(try FileSystem.contents(of: target) == Array("keep me".utf8))
        #expect(FileSystem.symbolicLinkTarget(directory.path + "/link") == nil)
        #expect(try FileSystem.contents(of: directory.path + "/link") == Array("new".utf8))
        #expect(try FileSystem.names(in: directory.path).sorted() == ["elsewhere", "link"])
    }

    /// A name as long as a name may be still leaves room for the new file's suffix.
    @Test func aLongNameIsReplaced() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let name = String(repeating: "é", count: 127)   // 254 bytes
        #expect(FileManager.default.createFile(atPath: directory.path + "/" + name, contents: Data("old".utf8)))
        try FileSystem.replace(directory.path + "/" + name, with: Array("new".utf8), permissions: 0o600)
        #expect(try FileSystem.contents(of: directory.path + "/" + name) == Array("new".utf8))
        #expect(try FileSystem.names(in: directory.path) == [name])
    }

}
