import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
@testable import SecretService
import Synchronization
import SystemKit

/// A private bus and a connection on it (its loop on a thread of its own) serving one object
/// whose method `Identify` answers with what a `CallerIdentifier` makes of the caller: its
/// application (encoded) and its executable's SHA-256 (hex). The identifier's questions to
/// the bus are counted.
final class IdentifyingServer: @unchecked Sendable {
    static let path: ObjectPath = "/org/coffer/Who"
    static let interface = "org.coffer.Who"

    let bus: PrivateBus
    let connection: DBusConnection
    let identifier: CallerIdentifier
    private let queries = QueryCounter()
    private let loop: LoopThread

    /// - askBus: how the identifier asks the bus (nil: as in production); `readProcess` likewise.
    init(capacity: Int = CallerIdentifier.defaultCapacity, askBus: CallerIdentifier.CredentialsQuery? = nil,
         readProcess: @escaping CallerIdentifier.ProcessReader = { pid throws(ProcessIdentityError) in try ProcessIdentity.read(processID: pid) }) throws {
        bus = try PrivateBus()
        let connection = try DBusConnection(address: bus.address)
        let queries = self.queries
        let ask = askBus ?? { name, completion in connection.connectionCredentials(of: name, completion: completion) }
        identifier = CallerIdentifier(connection: connection, capacity: capacity, askBus: { name, completion in
            queries.count.add(1, ordering: .relaxed)
            ask(name, completion)
        }, readProcess: readProcess)
        connection.objectServer.register(path: Self.path, object: WhoObject(identifier: identifier))
        self.connection = connection
        loop = LoopThread(connection)
    }

    /// How many times the identifier asked the bus.
    var busQueries: Int { queries.count.load(ordering: .relaxed) }

    /// Identifies `name` on the loop thread; nil if no answer came within 10 s. `sameTurn`
    /// runs right after on the loop thread (e.g. another `identify`, a `forget`).
    func identify(_ name: String, sameTurn: @escaping @Sendable () -> Void = {}) -> Result<Caller, IdentificationError>? {
        let answer = Mutex<Result<Caller, IdentificationError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        connection.post { [identifier] in
            identifier.identify(name) { result in
                answer.withLock { $0 = result }
                done.signal()
            }
            sameTurn()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return answer.withLock { $0 }
    }

    /// Runs `work` on the loop thread and returns its result (nil after 10 s).
    func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        connection.post {
            result.withLock { $0 = work() }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// How many callers the identifier remembers (nil: no answer from the loop).
    var cachedCount: Int? { onLoop { [identifier] in identifier.cachedCount } }

    /// dbus-send's arguments to call `Identify` here (with a 10 s reply timeout).
    var dbusSendArguments: [String] {
        ["--bus=\(bus.address)", "--print-reply", "--reply-timeout=10000", "--dest=\(connection.uniqueName)",
         Self.path.rawValue, "\(Self.interface).Identify"]
    }

    /// The application and digest in dbus-send's `--print-reply` output, or nil.
    static func answer(inDBusSendOutput output: String) -> (application: String, digest: String)? {
        let strings = output.split(separator: "\n").compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("string \""), text.hasSuffix("\"") else { return nil }
            return String(text.dropFirst("string \"".count).dropLast())
        }
        return strings.count == 2 ? (strings[0], strings[1]) : nil
    }

    func stop() {
        loop.stop()
        bus.stop()
    }
}

/// How many times the bus was asked.
private final class QueryCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// The object `IdentifyingServer` serves.
private struct WhoObject: DBusObject {
    let identifier: CallerIdentifier
    let interfaces = [InterfaceDescription(IdentifyingServer.interface, methods: [
        MethodDescription("Identify", out: [ArgumentDescription("application", .string), ArgumentDescription("digest", .string)]),
    ])]

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        identifier.identify(call.sender) { [identifier] result in
            switch result {
            case .failure(let error):
                call.fail(DBusError.failed(error.description))
            case .success(let caller):
                identifier.executableDigest(of: caller) { digest in
                    call.reply([.string(caller.application.encoded), .string(digest.map { Hex.encode($0) } ?? "none")])
                }
            }
        }
        return .deferred
    }
}
