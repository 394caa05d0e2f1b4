internal import CDBus
import Synchronization

/// A D-Bus message: method call, method return, error or signal.
///
/// Create messages with the static constructors, add the body with `append(_:)` before sending,
/// read headers through the properties and the body with `arguments()`. All header strings and
/// body values are copied into Swift values at once, so they stay valid after the message is
/// gone. A message that was sent or received is locked: `append` and setters then throw instead
/// of reaching libdbus (which would abort). Do not mutate one message from two threads at once.
public final class DBusMessage: @unchecked Sendable {   // libdbus messages are reference-counted thread-safely; a sent one is locked
    let raw: OpaquePointer
    private let locked: Atomic<Bool>

    /// The four kinds of message.
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal, invalid
    }

    /// Takes over one reference to `raw` (from a `dbus_message_new*` call or a receive).
    init(adopting raw: OpaquePointer, locked: Bool) {
        self.raw = raw
        self.locked = Atomic(locked)
    }

    /// Adds a reference to a message libdbus lends us (e.g. in a filter callback).
    convenience init(borrowing raw: OpaquePointer) {
        dbus_message_ref(raw)
        self.init(adopting: raw, locked: true)
    }

    deinit { dbus_message_unref(raw) }

    // MARK: Construction

    /// A method call. `destination` is a bus name (nil for peer-to-peer); `interface` may be nil.
    public static func methodCall(destination: String?, path: ObjectPath, interface: String?,
                                  member: String, arguments: [DBusValue] = []) throws(DBusError) -> DBusMessage {
        if let destination { try DBusNames.requireBusName(destination) }
        if let interface { try DBusNames.requireInterface(interface) }
        try DBusNames.requireMember(member)
        let m = destination.withOptionalCString { d in
            path.rawValue.withCString { p in
                interface.withOptionalCString { i in
                    member.withCString { dbus_message_new_method_call(d, p, i, $0) }
                }
            }
        }
        let message = DBusMessage(adopting: unwrapOrDie(m), locked: false)
        try message.append(arguments)
        return message
    }

    /// A signal emitted from `path`. Set `destination` for a unicast signal.
    public static func signal(path: ObjectPath, interface: String, member: String,
                              arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) -> DBusMessage {
        try DBusNames.requireInterface(interface)
        try DBusNames.requireMember(member)
        let m = path.rawValue.withCString { p in
            interface.withCString { i in member.withCString { dbus_message_new_signal(p, i, $0) } }
        }
        let message = DBusMessage(adopting: unwrapOrDie(m), locked: false)
        if let destination { try message.setDestination(destination) }
        try message.append(arguments)
        return message
    }

    /// A method return answering this (received) method call, with `arguments` as body.
    public func makeReply(_ arguments: [DBusValue] = []) throws(DBusError) -> DBusMessage {
        try requireReplyable()
        let reply = DBusMessage(adopting: unwrapOrDie(dbus_message_new_method_return(raw)), locked: false)
        try reply.append(arguments)
        return reply
    }

    /// An error reply answering this (received) method call. An invalid error name is replaced
    /// by `org.freedesktop.DBus.Error.Failed` (the original name is kept in the message text),
    /// and NUL characters are dropped from the text, so this never fails for a received call.
    public func makeErrorReply(_ error: DBusError) throws(DBusError) -> DBusMessage {
        try requireReplyable()
        var name = error.name
        var text = error.message
        if !DBusNames.isValidErrorName(name) {
            text = "\(name): \(text)"
            name = DBusError.Name.failed
        }
        text.removeAll { $0 == "\0" }
        let m = name.withCString { n in text.withCString { dbus_message_new_error(raw, n, $0) } }
        return DBusMessage(adopting: unwrapOrDie(m), locked: false)
    }

    // MARK: Headers

    public var kind: Kind {
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: return .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: return .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: return .error
        case DBUS_MESSAGE_TYPE_SIGNAL: return .signal
        default: return .invalid
        }
    }

    public var path: ObjectPath? { copy(dbus_message_get_path(raw)).map(ObjectPath.init(unchecked:)) }
    public var interface: String? { copy(dbus_message_get_interface(raw)) }
    public var member: String? { copy(dbus_message_get_member(raw)) }
    /// The error name of an error message.
    public var errorName: String? { copy(dbus_message_get_error_name(raw)) }
    /// The sender's unique name (set by the bus on received messages).
    public var sender: String? { copy(dbus_message_get_sender(raw)) }
    public var destination: String? { copy(dbus_message_get_destination(raw)) }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    /// The body signature (empty for no arguments).
    public var signature: Signature {
        Signature(unchecked: copy(dbus_message_get_signature(raw)) ?? "")
    }

    /// Whether the caller asked for no reply (method calls only).
    public var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// Whether the body carries Unix file descriptors (`h`).
    public var containsFileDescriptors: Bool { dbus_message_contains_unix_fds(raw) != 0 }

    public var isLocked: Bool { locked.load(ordering: .acquiring) }

    /// For an error message: the error name and its first string argument as message.
    public var error: DBusError? {
        guard kind == .error, let name = errorName else { return nil }
        let text = (try? arguments())?.first?.string ?? ""
        return DBusError(name: name, message: text)
    }

    public func setDestination(_ destination: String?) throws(DBusError) {
        if let destination { try DBusNames.requireBusName(destination) }
        try requireUnlocked()
        let ok = destination.withOptionalCString { dbus_message_set_destination(raw, $0) }
        if ok == 0 { fatalError("libdbus: out of memory") }
    }

    // MARK: Body

    /// Appends `values` to the body after validating them (see `DBusValue.validate()`). File
    /// descriptors are duplicated into the message (the caller keeps its own). Should one not go
    /// in (closed meanwhile, or no descriptor left), this throws and the message must be dropped.
    public func append(_ values: [DBusValue]) throws(DBusError) {
        guard !values.isEmpty else { return }
        try requireUnlocked()
        let bodySignature = try DBusValue.validateBody(values)
        let total = signature.rawValue.utf8.count + bodySignature.rawValue.utf8.count
        guard total <= SignatureParser.maxLength else {
            throw .invalidArgs("message signature would exceed \(SignatureParser.maxLength) bytes")
        }
        try MessageWriter.append(values, to: raw)
    }

    /// Appends one dictionary `a{<key><value>}` built entry by entry: `fill` gets a function that
    /// marshals one entry at once, so the entries never need to exist all together (a reply of
    /// many secrets holds one in secure memory at a time). If `fill` throws, the message is left
    /// unusable: drop it.
    public func appendDictionary(keySignature: Signature, valueSignature: Signature,
                                 _ fill: (_ add: (DBusValue, DBusValue) throws(DBusError) -> Void) throws -> Void) throws {
        try requireUnlocked()
        guard keySignature.isBasicType, valueSignature.isSingleCompleteType else {
            throw DBusError.invalidArgs("a{\(keySignature)\(valueSignature)} is not a dictionary type")
        }
        try MessageWriter.appendDictionary(to: raw, key: keySignature, value: valueSignature, fill)
    }

    /// Decodes the body. Strings are copied; each Unix file descriptor (`h`) is a new one, owned
    /// by the `UnixFileDescriptor` it is read as (every call reads new ones). Byte arrays inside
    /// argument `i` go straight to secure memory (`.secureBytes`) when `secretLimits[i]` is set,
    /// and are refused when longer than it.
    public func arguments(secretLimits: [Int?] = []) throws(DBusError) -> [DBusValue] {
        try MessageReader.read(raw, secretLimits: secretLimits)
    }

    // MARK: Internals

    func markLocked() { locked.store(true, ordering: .releasing) }

    /// libdbus aborts when asked to reply to a message without a serial (never sent/received).
    private func requireReplyable() throws(DBusError) {
        guard kind == .methodCall else { throw .invalidArgs("only a method call can be replied to") }
        guard serial != 0 else { throw .invalidArgs("cannot reply to a method call that was never sent") }
    }

    private func requireUnlocked() throws(DBusError) {
        if isLocked { throw .invalidArgs("message was already sent or received and cannot be changed") }
    }

    private func copy(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
}

func unwrapOrDie(_ p: OpaquePointer?) -> OpaquePointer {
    guard let p else { fatalError("libdbus: out of memory") }
    return p
}

extension Optional where Wrapped == String {
    func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let s): return s.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
