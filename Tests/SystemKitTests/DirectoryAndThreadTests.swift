import Dispatch
import Foundation
import Synchronization
@testable import SystemKit
import Testing

/// What the daemon uses instead of Foundation: directory listing and creation, the home
/// directory, and threads.
struct DirectoryAndThreadTests {
    @Test func namesAreTheDirectorysEntriesAndErrorsSayWhy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try FileSystem.names(in: directory.path).isEmpty)
        for name in ["a.coffer", "b c", "ü"] {
            #expect(FileManager.default.createFile(atPath: directory.path + "/" + name, contents: nil))
        }
        try FileManager.default.createDirectory(atPath: directory.path + "/sub", withIntermediateDirectories: false)
        #expect(try FileSystem.names(in: directory.path).sorted() == ["a.coffer", "b c", "sub", "ü"])
        #expect(throws: Errno.noSuchFile) { try FileSystem.names(in: directory.path + "/missing") }
    }

    @Test func makeDirectoriesMakesTheMissingOnesPrivateAndLeavesTheOthers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let deep = directory.path + "/one/two/three"
        try FileSystem.makeDirectories(deep, permissions: 0o700)
        #expect(try FileStatus.of(deep).kind == .directory)
        #expect(try FileStatus.of(deep).permissions & 0o777 == 0o700)
        #expect(try FileStatus.of(directory.path + "/one").permissions & 0o777 == 0o700)
        try FileSystem.makeDirectories(deep, permissions: 0o700)   // there already: fine
        #expect(FileManager.default.createFile(atPath: directory.path + "/file", contents: nil))
        #expect(throws: Errno.self) { try FileSystem.makeDirectories(directory.path + "/file", permissions: 0o700) }
        #expect(throws: Errno.self) { try FileSystem.makeDirectories(directory.path + "/file/below", permissions: 0o700) }
    }

    @Test func theHomeDirectoryIsThePasswordDatabases() {
        let home = FileSystem.homeDirectoryOfThisUser()
        #expect(home.hasPrefix("/"))
        #expect(home == String(cString: getpwuid(getuid()).pointee.pw_dir))
    }

    @Test func aThreadRunsItsBodyUnderItsName() throws {
        let seen = Mutex<(name: String, thread: pthread_t)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Threads.start(name: "a rather long thread name") {
            let comm = (try? FileSystem.contents(of: "/proc/thread-self/comm")).map { String(decoding: $0, as: UTF8.self) } ?? ""
            seen.withLock { $0 = (comm.trimmingCharacters(in: .newlines), pthread_self()) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let result = try #require(seen.withLock { $0 })
        #expect(result.name == "a rather long t")   // the kernel keeps 15 bytes
        #expect(pthread_equal(result.thread, pthread_self()) == 0)
    }
}
