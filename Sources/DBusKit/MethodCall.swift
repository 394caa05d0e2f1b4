import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The context of one incoming method call, handed to `DBusObject` handlers.
///
/// Holds the caller (`sender`), the target (`path`, `interface`, `member`) and the decoded
/// `arguments`. A handler answers by returning `.reply(...)` or throwing; or it returns
/// `.deferred`, keeps this object, and later calls `reply(_:)` or `fail(_:)` from any thread
/// (the reply is sent from the loop thread). Only the first answer counts. A deferred call
/// that is released without an answer is answered with `Failed`, so callers never hang.
public final class MethodCall: Sendable {
    /// The caller's unique bus name (empty on a peer-to-peer connection).
    public let sender: String
    /// The object path that was called (as sent by the caller, e.g. an alias path).
    public let path: ObjectPath
    /// The interface of the method (resolved by the server when the caller omitted it).
    public let interface: String
    public let member: String
    /// The arguments, matching the method's in-signature, until the call is answered: then
    /// they are let go, so that a secret among them is released (and wiped) before the reply
    /// leaves, not whenever the last closure holding the call goes.
    public var arguments: [DBusValue] { state.withLock { $0.arguments } }
    /// The raw incoming message.
    public let message: DBusMessage
    /// The connection the call came in on.
    public let connection: DBusConnection

    /// Out-signature replies are checked against (nil: not checked).
    let expectedReplySignature: String?
    private struct State {
        var answered = false
        var arguments: [DBusValue]
    }
    private let state: Mutex<State>

    init(message: DBusMessage, connection: DBusConnection, path: ObjectPath, interface: String,
         member: String, arguments: [DBusValue], expectedReplySignature: String?) {
        self.message = message
        self.connection = connection
        self.sender = message.sender ?? ""
        self.path = path
        self.interface = interface
        self.member = member
        self.state = Mutex(State(arguments: arguments))
        self.expectedReplySignature = expectedReplySignature
    }

    deinit {
        if !isAnswered {
            sendNow(.failure(.failed("the service did not answer \(interface).\(member)")))
        }
    }

    /// Whether `reply` or `fail` has been called.
    public var isAnswered: Bool { state.withLock { $0.answered } }

    /// The caller's Unix uid (cached per caller; one bus round trip on first use).
    public func senderUID() throws(DBusError) -> UInt32 {
        try connection.unixUser(of: sender)
    }

    /// What a call is answered with.
    private enum Answer: Sendable {
        case values([DBusValue])
        /// A reply built already (see `replyWithDictionary`).
        case built(DBusMessage)
        case failure(DBusError)
    }

    /// Sends a method return with `values`; thread-safe. Values not matching the declared
    /// out-signature are replaced by a `Failed` error reply (a bug in the handler).
    public func reply(_ values: [DBusValue] = []) {
        answer(.values(values))
    }

    /// Replies with one dictionary, built now entry by entry by `fill` (see
    /// `DBusMessage.appendDictionary`): for replies whose values should not all exist at once.
    /// If `fill` throws, nothing is sent and the error is rethrown (answer the call with it).
    public func replyWithDictionary(keySignature: Signature, valueSignature: Signature,
                                    _ fill: (_ add: (DBusValue, DBusValue) throws(DBusError) -> Void) throws -> Void) throws {
        let reply = try message.makeReply()
        try reply.appendDictionary(keySignature: keySignature, valueSignature: valueSignature, fill)
        answer(.built(reply))
    }

    /// Sends an error reply; thread-safe.
    public func fail(_ error: any Error) {
        answer(.failure(DBusError(converting: error)))
    }

    private func answer(_ result: Answer) {
        let first = state.withLock { s -> Bool in
            defer {
                s.answered = true
                s.arguments = []
            }
            return !s.answered
        }
        guard first else { return }
        sendNow(result)
    }

    /// Builds and sends the reply from the calling thread: a reply made ready on another thread
    /// (say, once a write is durable) leaves without waiting for the loop thread to wake up.
    private func sendNow(_ result: Answer) {
        let (interface, member) = (self.interface, self.member)
        MethodCall.send(result, to: message, on: connection, expected: expectedReplySignature, label: { "\(interface).\(member)" })
    }

    private static func send(_ result: Answer, to call: DBusMessage,
                             on connection: DBusConnection, expected: String?, label: () -> String) {
        guard !call.noReplyExpected else { return }
        var reply: DBusMessage?
        switch result {
        case .built(let message):
            let signature = message.signature.rawValue
            if let expected, expected != signature {
                reply = try? call.makeErrorReply(.failed("internal error: \(label()) produced a reply of type '\(signature)' instead of '\(expected)'"))
            } else {
                reply = message
            }
        case .values(let values):
            let signature = values.map(\.signatureString).joined()
            if let expected, expected != signature {
                reply = try? call.makeErrorReply(.failed("internal error: \(label()) produced a reply of type '\(signature)' instead of '\(expected)'"))
            } else {
                do {
                    reply = try call.makeReply(values)
                } catch {
                    reply = try? call.makeErrorReply(.failed("internal error: cannot encode the reply of \(label()): \(error.message)"))
                }
            }
        case .failure(let error):
            reply = try? call.makeErrorReply(error)
        }
        guard let reply else { return }
        do {
            try connection.send(reply)
        } catch where error.name == DBusError.Name.notSupported {
            // A reply with file descriptors the caller's connection cannot take: say so instead.
            if let refusal = try? call.makeErrorReply(error) { _ = try? connection.send(refusal) }
        } catch {}
    }
}
