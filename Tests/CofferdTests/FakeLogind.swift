import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import SystemKit

/// logind as cofferd sees it, on a private bus standing in for the system bus: it owns
/// org.freedesktop.login1, lists sessions (`ListSessions`), answers each session's `User`
/// property, hands out sleep inhibitors (`Inhibit`, a pipe's end, as logind does) and emits
/// the signals a real logind emits: a session's `Lock`, the manager's `PrepareForSleep`,
/// `SessionNew` and `SessionRemoved`.
final class FakeLogind: @unchecked Sendable {
    static let managerPath: ObjectPath = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"
    static let session = "org.freedesktop.login1.Session"

    let bus: PrivateBus
    private let connection: DBusConnection
    private let loop: LoopThread
    /// Sessions: id → uid.
    private let sessions = Mutex<[String: UInt32]>([:])
    /// Our ends of the inhibitor pipes handed out (readable: EOF once the holder closed its end).
    private let inhibitors = Mutex<[FileDescriptor]>([])
    /// How often `ListSessions` was called.
    private let listings = Mutex(0)

    /// Whether someone (cofferd, at start) has listed the sessions.
    var sessionsListed: Bool { listings.withLock { $0 } > 0 }

    /// Starts the bus and the service with `sessions` (id → uid).
    init(sessions initial: [String: UInt32]) throws {
        bus = try PrivateBus()
        connection = try DBusConnection(address: bus.address)
        sessions.withLock { $0 = initial }
        loop = LoopThread(connection)
        connection.objectServer.register(prefix: Self.managerPath, tree: ClosureObjectTree(object: { [unowned self] path in
            if path == Self.managerPath { return Manager(logind: self) }
            let prefix = Self.managerPath.rawValue + "/session/"
            guard path.rawValue.hasPrefix(prefix) else { return nil }
            let id = String(path.rawValue.dropFirst(prefix.count))
            return sessions.withLock { $0[id] }.map { Session(uid: $0) }
        }))
        _ = try connection.requestName("org.freedesktop.login1", flags: [.doNotQueue])
    }

    func stop() {
        loop.stop()
        connection.close()
        inhibitors.withLock { for fd in $0 { fd.close() }; $0.removeAll() }
        bus.stop()
    }

    static func path(ofSession id: String) -> ObjectPath { ObjectPath(validating: "\(managerPath.rawValue)/session/\(id)")! }

    // MARK: What logind does

    /// `loginctl lock-session ID`.
    func lockSession(_ id: String) throws {
        try connection.emitSignal(path: Self.path(ofSession: id), interface: Self.session, member: "Lock")
    }

    func prepareForSleep(_ starting: Bool) throws {
        try connection.emitSignal(path: Self.managerPath, interface: Self.manager, member: "PrepareForSleep", arguments: [.boolean(starting)])
    }

    func addSession(_ id: String, uid: UInt32) throws {
        sessions.withLock { $0[id] = uid }
        try connection.emitSignal(path: Self.managerPath, interface: Self.manager, member: "SessionNew",
                                  arguments: [.string(id), .objectPath(Self.path(ofSession: id))])
    }

    func removeSession(_ id: String) throws {
        sessions.withLock { $0[id] = nil }
        try connection.emitSignal(path: Self.managerPath, interface: Self.manager, member: "SessionRemoved",
                                  arguments: [.string(id), .objectPath(Self.path(ofSession: id))])
    }

    /// How many sleep inhibitors are held now (handed out and not yet closed by their holder).
    var inhibitorsHeld: Int {
        inhibitors.withLock { fds in
            fds.filter { fd in
                guard let ready = try? FileDescriptor.poll([(fd, .readable)], timeoutMilliseconds: 0) else { return false }
                return ready[0].isEmpty   // readable (EOF) or hung up: released
            }.count
        }
    }

    fileprivate func listSessions() -> DBusValue {
        listings.withLock { $0 += 1 }
        let rows = sessions.withLock { $0 }.sorted { $0.key < $1.key }.map { id, uid -> DBusValue in
            .structure([.string(id), .uint32(uid), .string("user\(uid)"), .string("seat0"), .objectPath(Self.path(ofSession: id))])
        }
        return .array(elementSignature: "(susso)", rows)
    }

    fileprivate func inhibit() throws -> DBusValue {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        inhibitors.withLock { $0.append(readEnd) }
        return .unixFD(UnixFileDescriptor(adopting: writeEnd))
    }

    private struct Manager: DBusObject {
        let logind: FakeLogind
        var interfaces: [InterfaceDescription] {
            [InterfaceDescription(FakeLogind.manager, methods: [
                MethodDescription("ListSessions", out: [ArgumentDescription("sessions", "a(susso)")]),
                MethodDescription("Inhibit", in: [ArgumentDescription("what", .string), ArgumentDescription("who", .string),
                                                  ArgumentDescription("why", .string), ArgumentDescription("mode", .string)],
                                  out: [ArgumentDescription("fd", .unixFD)]),
            ], signals: [
                SignalDescription("PrepareForSleep", [ArgumentDescription("start", .boolean)]),
                SignalDescription("SessionNew", [ArgumentDescription("id", .string), ArgumentDescription("path", .objectPath)]),
                SignalDescription("SessionRemoved", [ArgumentDescription("id", .string), ArgumentDescription("path", .objectPath)]),
            ])]
        }

        func handleMethod(_ call: MethodCall) throws -> MethodResult {
            switch call.member {
            case "ListSessions": return .reply([logind.listSessions()])
            case "Inhibit": return .reply([try logind.inhibit()])
            default: throw DBusError.unknownMethod(call.member)
            }
        }
    }

    private struct Session: DBusObject {
        let uid: UInt32
        var interfaces: [InterfaceDescription] {
            [InterfaceDescription(FakeLogind.session, properties: [PropertyDescription("User", "(uo)")],
                                  signals: [SignalDescription("Lock")])]
        }

        func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
            .structure([.uint32(uid), .objectPath(ObjectPath(validating: "/org/freedesktop/login1/user/_\(uid)")!)])
        }
    }
}
