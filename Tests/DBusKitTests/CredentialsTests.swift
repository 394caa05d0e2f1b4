import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import Synchronization
import Testing

/// GetConnectionCredentials, asked of a private bus: without waiting on the loop thread, and
/// waiting off it.
@Suite(.timeLimit(.minutes(5))) struct CredentialsTests {
    /// Asks for `name`'s credentials on `connection`'s running loop; the result and whether the
    /// completion ran on the loop thread, or nil if it did not come within 10 s.
    func askWithoutWaiting(_ connection: DBusConnection, _ name: String) -> (Result<ConnectionCredentials, DBusError>, onLoop: Bool)? {
        let answer = Mutex<(Result<ConnectionCredentials, DBusError>, Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        connection.post {
            connection.connectionCredentials(of: name) { result in
                answer.withLock { $0 = (result, connection.isOnLoopThread) }
                done.signal()
            }
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return answer.withLock { $0 }
    }

    func errorName(_ result: Result<ConnectionCredentials, DBusError>) -> String? {
        if case .failure(let error) = result { return error.name }
        return nil
    }

    @Test func aPeersProcessAndUserComeFromTheBus() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.startServer()
        let expected = ConnectionCredentials(unixUserID: getuid(), processID: UInt32(getpid()))

        let asked = try #require(askWithoutWaiting(h.server, h.client.uniqueName), "no answer within 10 s")
        #expect(try asked.0.get() == expected)
        #expect(asked.onLoop, "the completion ran off the loop thread")
        #expect(try h.client.connectionCredentials(of: h.server.uniqueName) == expected)   // no loop: waits

        // The bus daemon is a process of its own, with a PID the test knows.
        let bus = try #require(askWithoutWaiting(h.server, "org.freedesktop.DBus"))
        #expect(try bus.0.get().processID == UInt32(h.bus.pid))
        #expect(try h.client.connectionCredentials(of: "org.freedesktop.DBus").processID == UInt32(h.bus.pid))
    }

    @Test func aNameWithoutOwnerOrAnInvalidNameFails() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.startServer()
        let gone = try #require(askWithoutWaiting(h.server, ":1.9999"))
        #expect(errorName(gone.0) == DBusError.Name.nameHasNoOwner)
        expectDBusError(DBusError.Name.nameHasNoOwner) { _ = try h.client.connectionCredentials(of: ":1.9999") }

        // Checked here, never sent: libdbus would abort on an invalid name.
        let invalid = try #require(askWithoutWaiting(h.server, "not a bus name"))
        #expect(errorName(invalid.0) == DBusError.Name.invalidArgs)
        expectDBusError(DBusError.Name.invalidArgs) { _ = try h.client.connectionCredentials(of: "not a bus name") }
    }

    @Test func theDictionaryIsReadByKeyAndUnknownKeysAreIgnored() throws {
        let full: [String: DBusValue] = [
            "UnixUserID": .uint32(1000), "ProcessID": .uint32(4242),
            "UnixGroupIDs": .array(elementSignature: .uint32, [.uint32(1000)]),
            "LinuxSecurityLabel": .bytes(Array("unconfined\0".utf8)),
            "org.example.Future": .string("anything"),
        ]
        #expect(try ConnectionCredentials(dictionary: full) == ConnectionCredentials(unixUserID: 1000, processID: 4242))
        #expect(try ConnectionCredentials(dictionary: [:]) == ConnectionCredentials(unixUserID: nil, processID: nil))
        #expect(try ConnectionCredentials(dictionary: ["UnixUserID": .uint32(0)]).processID == nil)
        #expect(throws: DBusError.self) { try ConnectionCredentials(dictionary: ["ProcessID": .string("4242")]) }
        #expect(throws: DBusError.self) { try ConnectionCredentials(dictionary: ["UnixUserID": .int32(1000)]) }
    }
}
