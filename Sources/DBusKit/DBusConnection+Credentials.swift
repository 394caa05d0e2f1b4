/// What the bus daemon knows of the process behind a connection: what the kernel told it
/// (`SO_PEERCRED`) when that process connected, never anything the process said.
///
/// The bus omits what it cannot tell (a peer on a TCP socket has no process id here), so every
/// field may be nil. Keys this type does not read (`UnixGroupIDs`, `LinuxSecurityLabel`, and
/// `ProcessFD` from buses that pass it) are ignored.
public struct ConnectionCredentials: Equatable, Sendable {
    /// The Unix user id of the process (`UnixUserID`).
    public let unixUserID: UInt32?
    /// The id of the process that connected (`ProcessID`).
    public let processID: UInt32?

    public init(unixUserID: UInt32?, processID: UInt32?) {
        self.unixUserID = unixUserID
        self.processID = processID
    }

    /// Reads the `a{sv}` GetConnectionCredentials answers with (its variants unwrapped). A
    /// known key with a value of another type throws `invalidArgs`: a bus that sends one is
    /// not to be believed about the rest.
    public init(dictionary: [String: DBusValue]) throws(DBusError) {
        func number(_ key: String) throws(DBusError) -> UInt32? {
            guard let value = dictionary[key] else { return nil }
            guard let number = value.uint32 else {
                throw .invalidArgs("GetConnectionCredentials: \(key) is '\(value.signatureString)', not 'u'")
            }
            return number
        }
        self.init(unixUserID: try number("UnixUserID"), processID: try number("ProcessID"))
    }

    /// Reads a GetConnectionCredentials reply.
    init(reply: DBusMessage) throws(DBusError) {
        let values = try reply.arguments()
        guard values.count == 1, let dictionary = values[0].variantDictionary else {
            throw .invalidArgs("GetConnectionCredentials answered '\(reply.signature.rawValue)', not 'a{sv}'")
        }
        try self.init(dictionary: dictionary)
    }
}

extension DBusConnection {
    /// Asks the bus for the credentials of the connection owning `name` (a unique name such as
    /// `:1.42`, or a well-known name) and returns at once: `completion` runs on the loop thread
    /// with them, or with the error (`NameHasNoOwner` once that connection has left the bus).
    /// An invalid name fails at once, on the calling thread. Needs a running loop to complete
    /// when called off the loop thread.
    ///
    /// Asks `org.freedesktop.DBus.GetConnectionCredentials` (a `ProcessFD` descriptor that
    /// newer buses add is read, not kept, and closed with the reply).
    public func connectionCredentials(of name: String, timeout: Duration = DBusConnection.defaultTimeout,
                                      completion: @escaping @Sendable (Result<ConnectionCredentials, DBusError>) -> Void) {
        askBus("GetConnectionCredentials", about: name, timeout: timeout) { result in
            completion(result.flatMap { reply in Result { () throws(DBusError) in try ConnectionCredentials(reply: reply) } })
        }
    }

    /// The credentials of the connection owning `name`, waiting for the bus's answer. On the
    /// loop thread this blocks the loop for one round trip: use the completion form there.
    public func connectionCredentials(of name: String,
                                      timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> ConnectionCredentials {
        try DBusNames.requireBusName(name)
        return try ConnectionCredentials(reply: try call(try busMethodCall("GetConnectionCredentials", name), timeout: timeout))
    }
}
