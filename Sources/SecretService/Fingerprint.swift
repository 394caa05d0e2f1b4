import DBusKit
import Synchronization

/// A fingerprint check that authorizes an unlock: not key derivation (the key was kept aside
/// when the collection locked by itself), only the user's presence, as a password dialog's
/// alternative.
public protocol FingerprintReader: Sendable {
    /// Claims the reader and starts verifying any enrolled finger; `matched` is called (on any
    /// thread) once a finger matches. Nil, with the reason, where there is no reader or no
    /// enrolled finger, or the reader is busy.
    func beginVerification(matched: @escaping @Sendable () -> Void) -> Result<any FingerprintVerification, FingerprintUnavailable>
}

/// Why no fingerprint can be asked for.
public struct FingerprintUnavailable: Error, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// A verification under way.
public protocol FingerprintVerification: Sendable {
    /// Stops verifying and releases the reader; whether a finger matched.
    func stop() -> Bool
}

/// fprintd (`net.reactivated.Fprint` on the system bus): `GetDefaultDevice`, then on the
/// device `Claim`, `ListEnrolledFingers`, `VerifyStart("any")` and its `VerifyStatus` signals,
/// `VerifyStop`, `Release`. A scan that does not match starts another, up to
/// `maximumMismatches`; a reader that disconnects or fails ends it.
public final class Fprintd: FingerprintReader {
    static let service = "net.reactivated.Fprint"
    static let managerPath: ObjectPath = "/net/reactivated/Fprint/Manager"
    static let manager = "net.reactivated.Fprint.Manager"
    static let device = "net.reactivated.Fprint.Device"
    /// Mismatching scans after which only the password remains.
    public static let maximumMismatches = 3

    private let system: DBusConnection

    /// - system: a system bus connection whose loop runs on a thread of its own.
    public init(system: DBusConnection) {
        self.system = system
    }

    public func beginVerification(matched: @escaping @Sendable () -> Void) -> Result<any FingerprintVerification, FingerprintUnavailable> {
        let path: ObjectPath
        do {
            // First a call to the name, which starts fprintd if the bus activates it (it exits when idle).
            guard let device = try system.call(destination: Self.service, path: Self.managerPath, interface: Self.manager,
                                               member: "GetDefaultDevice").first?.objectPath else {
                return .failure(FingerprintUnavailable("fprintd named no fingerprint reader"))
            }
            path = device
            _ = try call(path, "Claim", [.string("")])
        } catch {
            return .failure(FingerprintUnavailable("no fingerprint reader is ready (\(error.message))"))
        }
        do {
            let fingers = (try? call(path, "ListEnrolledFingers", [.string("")]).first?.stringArray) ?? []
            guard !fingers.isEmpty else { throw FingerprintUnavailable("no finger is enrolled (fprintd-enroll enrolls one)") }
            let verification = Verification(fprintd: self, device: path, owner: try system.nameOwner(Self.service), matched: matched)
            do {
                try verification.start()
            } catch {
                _ = verification.stop()   // no handler, match rule or claim left behind
                return .failure(FingerprintUnavailable("the fingerprint reader did not start verifying (\(error.message))"))
            }
            return .success(verification)
        } catch {
            _ = try? call(path, "Release")
            let reason = (error as? FingerprintUnavailable)?.reason ?? "the fingerprint reader did not start verifying (\(error))"
            return .failure(FingerprintUnavailable(reason))
        }
    }

    fileprivate func call(_ device: ObjectPath, _ member: String, _ arguments: [DBusValue] = []) throws(DBusError) -> [DBusValue] {
        try system.call(destination: Self.service, path: device, interface: Self.device, member: member, arguments: arguments,
                        timeout: .seconds(10))
    }

    /// One claim of the reader: scans until a match, too many mismatches, a failure or `stop`.
    private final class Verification: FingerprintVerification, Sendable {
        let fprintd: Fprintd
        let device: ObjectPath
        let matched: @Sendable () -> Void
        private let state = Mutex((matched: false, mismatches: 0, over: false))
        private let token = Mutex<HandlerToken?>(nil)
        private let rule: SignalRule

        init(fprintd: Fprintd, device: ObjectPath, owner: String, matched: @escaping @Sendable () -> Void) {
            self.fprintd = fprintd
            self.device = device
            self.matched = matched
            rule = SignalRule(interface: Fprintd.device, member: "VerifyStatus", path: device, sender: owner)
        }

        func start() throws(DBusError) {
            try fprintd.system.addMatch(rule.matchRule)
            let handler = fprintd.system.addSignalHandler(rule) { [weak self] message in
                guard let self, let arguments = try? message.arguments(), arguments.count == 2,
                      let result = arguments[0].string, let done = arguments[1].bool else { return }
                status(result, done: done)
            }
            token.withLock { $0 = handler }
            _ = try fprintd.call(device, "VerifyStart", [.string("any")])
        }

        /// On the system bus loop: a scan's outcome.
        private func status(_ result: String, done: Bool) {
            guard done else { return }   // "retry-scan", "swipe-too-short", …: the scan goes on
            let next = state.withLock { s -> String in
                guard !s.over else { return "" }
                switch result {
                case "verify-match":
                    s.matched = true
                    s.over = true
                    return "match"
                case "verify-no-match":
                    s.mismatches += 1
                    if s.mismatches >= Fprintd.maximumMismatches { s.over = true; return "stop" }
                    return "again"
                default:   // disconnected, unknown error
                    s.over = true
                    return "stop"
                }
            }
            let (system, device) = (fprintd.system, self.device)
            func send(_ member: String, _ arguments: [DBusValue] = []) {
                if let message = try? DBusMessage.methodCall(destination: Fprintd.service, path: device, interface: Fprintd.device,
                                                             member: member, arguments: arguments) {
                    system.callAsync(message) { _ in }
                }
            }
            switch next {
            case "match":
                send("VerifyStop")
                matched()
            case "again":
                send("VerifyStop")
                send("VerifyStart", [.string("any")])
            case "stop":
                send("VerifyStop")
            default:
                break
            }
        }

        func stop() -> Bool {
            let (matched, wasOver) = state.withLock { s in
                defer { s.over = true }
                return (s.matched, s.over)
            }
            if !wasOver { _ = try? fprintd.call(device, "VerifyStop") }
            _ = try? fprintd.call(device, "Release")
            if let handler = token.withLock({ $0 }) { fprintd.system.removeHandler(handler) }
            try? fprintd.system.removeMatch(rule.matchRule)
            return matched
        }
    }
}
