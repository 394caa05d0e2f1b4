import CofferTestSupport
import DBusKit
import Foundation
import Synchronization

/// fprintd as cofferd sees it, on a private bus standing in for the system bus: it owns
/// net.reactivated.Fprint and answers as a real fprintd does — `GetDefaultDevice`
/// (`NoSuchDevice` without a reader), and on the device `Claim`, `ListEnrolledFingers`
/// (`NoEnrolledPrints` without one), `VerifyStart` (then one `VerifyStatus(result, done)` per
/// scan, from `scans` in order), `VerifyStop`, `Release`.
final class FakeFprintd: @unchecked Sendable {
    enum Reader { case none, noFingers, scans([String]) }

    static let devicePath: ObjectPath = "/net/reactivated/Fprint/Device/0"
    private let connection: DBusConnection
    private let loop: LoopThread
    private let reader: Reader
    private let state = Mutex((calls: [String](), scan: 0))

    init(on bus: PrivateBus, reader: Reader) throws {
        self.reader = reader
        connection = try DBusConnection(address: bus.address)
        loop = LoopThread(connection)
        connection.objectServer.register(path: "/net/reactivated/Fprint/Manager", object: Manager(fprintd: self))
        connection.objectServer.register(path: Self.devicePath, object: Device(fprintd: self))
        _ = try connection.requestName("net.reactivated.Fprint", flags: [.doNotQueue])
    }

    func stop() {
        loop.stop()
        connection.close()
    }

    /// The device methods called so far, in order.
    var calls: [String] { state.withLock { $0.calls } }

    fileprivate func called(_ member: String) { state.withLock { $0.calls.append(member) } }

    /// `VerifyStart`: the next scan's result, a little later, as a finger takes time.
    fileprivate func verifyStart() {
        guard case .scans(let results) = reader else { return }
        let result = state.withLock { s -> String? in
            defer { s.scan += 1 }
            return s.scan < results.count ? results[s.scan] : nil
        }
        guard let result else { return }   // no finger ever comes
        let connection = self.connection
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) {
            try? connection.emitSignal(path: FakeFprintd.devicePath, interface: "net.reactivated.Fprint.Device", member: "VerifyStatus",
                                       arguments: [.string(result), .boolean(true)])
        }
    }

    private struct Manager: DBusObject {
        let fprintd: FakeFprintd
        var interfaces: [InterfaceDescription] {
            [InterfaceDescription("net.reactivated.Fprint.Manager",
                                  methods: [MethodDescription("GetDefaultDevice", out: [ArgumentDescription("device", .objectPath)])])]
        }

        func handleMethod(_ call: MethodCall) throws -> MethodResult {
            if case .none = fprintd.reader { throw DBusError(name: "net.reactivated.Fprint.Error.NoSuchDevice", message: "No devices available") }
            return .reply([.objectPath(FakeFprintd.devicePath)])
        }
    }

    private struct Device: DBusObject {
        let fprintd: FakeFprintd
        var interfaces: [InterfaceDescription] {
            [InterfaceDescription("net.reactivated.Fprint.Device", methods: [
                MethodDescription("Claim", in: [ArgumentDescription("username", .string)]),
                MethodDescription("Release"),
                MethodDescription("ListEnrolledFingers", in: [ArgumentDescription("username", .string)],
                                  out: [ArgumentDescription("fingers", .stringArray)]),
                MethodDescription("VerifyStart", in: [ArgumentDescription("finger", .string)]),
                MethodDescription("VerifyStop"),
            ], signals: [SignalDescription("VerifyStatus", [ArgumentDescription("result", .string), ArgumentDescription("done", .boolean)])])]
        }

        func handleMethod(_ call: MethodCall) throws -> MethodResult {
            fprintd.called(call.member)
            switch call.member {
            case "ListEnrolledFingers":
                if case .noFingers = fprintd.reader { throw DBusError(name: "net.reactivated.Fprint.Error.NoEnrolledPrints", message: "none") }
                return .reply([.stringArray(["right-index-finger"])])
            case "VerifyStart":
                fprintd.verifyStart()
                return .empty
            default:
                return .empty
            }
        }
    }
}
