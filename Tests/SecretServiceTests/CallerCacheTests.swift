import CofferCore
import DBusKit
import Foundation
import Synchronization
@testable import SecretService
@testable import SystemKit
import Testing

/// What `CallerIdentifier` remembers, how it shares lookups, and what it answers when it cannot
/// tell: with this test process's own connections as the callers, and the questions it asks
/// the bus counted.
@Suite(.timeLimit(.minutes(5))) struct CallerCacheTests {
    /// This process, as the identifier should name it.
    static let ownApplication = ProcessControl.executable(of: getpid()).flatMap { Application(kind: .executable, name: $0) }

    @Test func aKnownCallerIsAnsweredAtOnceWithoutAskingTheBus() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        let client = try DBusConnection(address: server.bus.address)
        let name = client.uniqueName

        // Two requests in one turn of the loop: one question to the bus, one caller for both.
        let second = Mutex<Caller?>(nil)
        let identifier = server.identifier
        let first = server.identify(name, sameTurn: {
            identifier.identify(name) { result in second.withLock { $0 = try? result.get() } }
        })
        let caller = try #require(first, "no answer within 10 s").get()
        #expect(caller.application == Self.ownApplication)
        #expect(caller.processID == getpid())
        #expect(caller.unixUserID == getuid())
        #expect(caller.uniqueName == name)
        #expect(server.onLoop { second.withLock { $0 } === caller } == true)   // after the first's answer
        #expect(server.busQueries == 1)

        // Known now: answered before `identify` returns, without the bus.
        let answeredAtOnce = server.onLoop {
            let answer = Mutex<Caller?>(nil)
            identifier.identify(name) { result in answer.withLock { $0 = try? result.get() } }
            return answer.withLock { $0 } === caller
        }
        #expect(answeredAtOnce == true)
        #expect(server.onLoop { identifier.cachedCaller(name) === caller } == true)
        #expect(server.busQueries == 1)

        // Forgotten: asked again.
        _ = server.onLoop { identifier.forget(name) }
        #expect(server.cachedCount == 0)
        let again = try #require(server.identify(name))
        #expect(try again.get() !== caller)
        #expect(try again.get().application == caller.application)
        #expect(server.busQueries == 2)
    }

    @Test func theCacheKeepsTheNewestCallers() throws {
        let server = try IdentifyingServer(capacity: 2)
        defer { server.stop() }
        let clients = try (0..<3).map { _ in try DBusConnection(address: server.bus.address) }
        for client in clients { #expect(try server.identify(client.uniqueName)?.get() != nil) }
        #expect(server.busQueries == 3)
        #expect(server.cachedCount == 2)

        #expect(try server.identify(clients[2].uniqueName)?.get() != nil)   // still known
        #expect(server.busQueries == 3)
        #expect(try server.identify(clients[0].uniqueName)?.get() != nil)   // the oldest: dropped
        #expect(server.busQueries == 4)
    }

    /// The cache does not grow with callers that come and go.
    @Test func callersThatComeAndGoLeaveNothingBehind() {
        var cache = BoundedCache<Int, Int>(capacity: 3)
        for key in 0..<10_000 {
            cache.insert(key, for: key)
            if key % 2 == 0 { cache.removeValue(forKey: key) }
        }
        #expect(cache.count == 3)
        #expect(cache[9999] == 9999 && cache[9997] == 9997 && cache[9995] == 9995)
        #expect(cache[9993] == nil && cache[9998] == nil)
        cache.insert(-1, for: 9995)   // inserted again: the newest now
        cache.insert(1, for: 1)
        #expect(cache[9995] == -1 && cache[1] == 1 && cache[9997] == nil)
    }

    @Test func aCallerForgottenDuringItsLookupIsAnsweredButNotRemembered() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        let client = try DBusConnection(address: server.bus.address)
        let identifier = server.identifier
        let name = client.uniqueName
        let answer = server.identify(name, sameTurn: { identifier.forget(name) })
        #expect(try #require(answer).get().processID == getpid())
        #expect(server.cachedCount == 0)
    }

    @Test func callersThatCannotBeToldAreErrorsNeverGuesses() throws {
        let server = try IdentifyingServer()
        defer { server.stop() }
        #expect(failure(server.identify(":1.9999")) == .gone(uniqueName: ":1.9999"))
        #expect(failure(server.identify("org.freedesktop.DBus")) == .notAUniqueName("org.freedesktop.DBus"))
        #expect(failure(server.identify("")) == .notAUniqueName(""))
        let left = try DBusConnection(address: server.bus.address)
        let name = left.uniqueName
        left.close()
        #expect(failure(server.identify(name)) == .gone(uniqueName: name))
        #expect(server.busQueries == 2)   // invalid names never reach the bus
        #expect(server.cachedCount == 0)
    }

    /// A process whose executable cannot be read (non-dumpable) is served as an unverified
    /// process named by its command name, never as an application; one that is gone is an error.
    @Test func aProcessThatHidesItsExecutableIsUnverified() throws {
        let server = try IdentifyingServer(readProcess: { pid throws(ProcessIdentityError) in
            throw .unreadable(processID: pid, .permissionDenied)
        })
        defer { server.stop() }
        let client = try DBusConnection(address: server.bus.address)
        guard case .success(let caller) = server.identify(client.uniqueName) else {
            Issue.record("a process that hides its executable was not served as unverified")
            return
        }
        let ownName = try ProcessStat.read(processID: getpid()).commandName
        #expect(caller.application == .unverified(commandName: ownName))
        #expect(!caller.application.isVerified)
        #expect(caller.process == nil && caller.executableDigest == nil)
        #expect(caller.processID == getpid())
        #expect(caller.unverifiedBecause?.contains("non-dumpable") == true)

        let vanished = try IdentifyingServer(readProcess: { pid throws(ProcessIdentityError) in throw .gone(processID: pid) })
        defer { vanished.stop() }
        let other = try DBusConnection(address: vanished.bus.address)
        #expect(failure(vanished.identify(other.uniqueName)) == .gone(uniqueName: other.uniqueName))
    }

    @Test func aBusThatNamesNoProcessIsAnError() throws {
        let server = try IdentifyingServer(askBus: { _, completion in
            completion(.success(ConnectionCredentials(unixUserID: 0, processID: nil)))
        })
        defer { server.stop() }
        #expect(failure(server.identify(":1.5")) == .noProcess(uniqueName: ":1.5"))
    }

    /// Which kind of identity wins, on identities read from fake processes.
    @Test func flatpakBeatsSnapBeatsExecutable() throws {
        let sleep = try ProcessIdentity.read(processID: getpid())
        func identity(flatpak: String?, snap: String?) -> ProcessIdentity {
            ProcessIdentity(processID: sleep.processID, startTime: sleep.startTime, executable: sleep.executable,
                            flatpakApplicationID: flatpak, snapName: snap, sharesMountNamespace: true)
        }
        #expect(Caller.application(of: identity(flatpak: "org.example.App", snap: "firefox"))?.encoded == "flatpak:org.example.App")
        #expect(Caller.application(of: identity(flatpak: nil, snap: "firefox"))?.encoded == "snap:firefox")
        #expect(Caller.application(of: identity(flatpak: nil, snap: nil)) == Self.ownApplication)
    }
}

/// The error of a failed identification; nil for a success or no answer.
func failure(_ result: Result<Caller, IdentificationError>?) -> IdentificationError? {
    if case .failure(let error)? = result { return error }
    return nil
}
