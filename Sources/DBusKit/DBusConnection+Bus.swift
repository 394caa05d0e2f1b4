/// Flags for `DBusConnection.requestName` (values of the D-Bus specification).
public struct RequestNameFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Let a later requester with `replaceExisting` take the name from us.
    public static let allowReplacement = RequestNameFlags(rawValue: 0x1)
    /// Take the name from its owner if that owner allowed replacement.
    public static let replaceExisting = RequestNameFlags(rawValue: 0x2)
    /// Do not wait in the queue if the name is taken.
    public static let doNotQueue = RequestNameFlags(rawValue: 0x4)
}

/// Reply codes of RequestName.
public enum RequestNameReply: UInt32, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}

/// Reply codes of ReleaseName.
public enum ReleaseNameReply: UInt32, Sendable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}

/// Handle for removing a handler registered on a connection.
public struct HandlerToken: Sendable, Hashable {
    let id: UInt64
}

extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath: ObjectPath = "/org/freedesktop/DBus"

    private func busCall(_ member: String, _ arguments: [DBusValue]) throws(DBusError) -> [DBusValue] {
        try call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                 member: member, arguments: arguments)
    }

    /// Asks the bus for a well-known name. Returns the bus's reply code (`.exists` when taken
    /// and `doNotQueue` was given, `.inQueue` when queued).
    public func requestName(_ name: String, flags: RequestNameFlags = []) throws(DBusError) -> RequestNameReply {
        try DBusNames.requireBusName(name)
        let reply = try busCall("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.uint32, let result = RequestNameReply(rawValue: code) else {
            throw .failed("unexpected RequestName reply")
        }
        return result
    }

    /// Gives up a well-known name.
    @discardableResult
    public func releaseName(_ name: String) throws(DBusError) -> ReleaseNameReply {
        try DBusNames.requireBusName(name)
        let reply = try busCall("ReleaseName", [.string(name)])
        guard let code = reply.first?.uint32, let result = ReleaseNameReply(rawValue: code) else {
            throw .failed("unexpected ReleaseName reply")
        }
        return result
    }

    /// The unique name owning `name`, or throws (`NameHasNoOwner`).
    public func nameOwner(_ name: String) throws(DBusError) -> String {
        try DBusNames.requireBusName(name)
        guard let owner = try busCall("GetNameOwner", [.string(name)]).first?.string else {
            throw .failed("unexpected GetNameOwner reply")
        }
        return owner
    }

    /// `nameOwner(_:)` without waiting, for the loop thread (where a blocking call would hold up
    /// every other caller): `completion` gets, on the loop thread, the unique name owning
    /// `name`, or the error (`NameHasNoOwner` when it has none).
    public func nameOwner(_ name: String, completion: @escaping @Sendable (Result<String, DBusError>) -> Void) {
        askBus("GetNameOwner", about: name) { result in
            completion(result.flatMap { (reply) -> Result<String, DBusError> in
                guard let owner = (try? reply.arguments())?.first?.string else {
                    return .failure(.failed("unexpected GetNameOwner reply"))
                }
                return .success(owner)
            })
        }
    }

    /// The process id of the connection owning bus name `name`, asked from the bus
    /// (GetConnectionUnixProcessID). Throws when the name has no owner or the bus cannot tell.
    public func unixProcessID(of name: String) throws(DBusError) -> UInt32 {
        try DBusNames.requireBusName(name)
        guard let pid = try busCall("GetConnectionUnixProcessID", [.string(name)]).first?.uint32 else {
            throw .failed("unexpected GetConnectionUnixProcessID reply")
        }
        return pid
    }

    /// Adds a bus match rule (e.g. `type='signal',interface='org.freedesktop.Secret.Service'`).
    public func addMatch(_ rule: String) throws(DBusError) {
        _ = try busCall("AddMatch", [.string(rule)])
    }

    public func removeMatch(_ rule: String) throws(DBusError) {
        _ = try busCall("RemoveMatch", [.string(rule)])
    }

    /// The uid `unixUser(of:)` cached for unique name `name`, if it asked already.
    public func knownUnixUser(of name: String) -> UInt32? { cachedUID(name) }

    /// The same, without waiting: `completion` runs on the loop thread with the uid (from the
    /// cache at once, else once the bus answers) or the error (`NameHasNoOwner` once the name
    /// has left). Owner tracking should be on already (`onNameVanished`; ObjectServer's
    /// `accessPolicy` turns it on), so that the cache forgets names that leave.
    public func unixUser(of name: String, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void) {
        if let uid = cachedUID(name) { return completion(.success(uid)) }
        askBus("GetConnectionUnixUser", about: name) { [weak self] result in
            completion(result.flatMap { reply -> Result<UInt32, DBusError> in
                guard let uid = (try? reply.arguments())?.first?.uint32 else {
                    return .failure(.failed("unexpected GetConnectionUnixUser reply"))
                }
                // A reply comes before the NameOwnerChanged of a name leaving after it, which
                // then forgets the entry.
                if name.hasPrefix(":") { self?.cacheUID(name, uid) }
                return .success(uid)
            })
        }
    }

    /// The Unix user id of the process owning bus name `name`, asked from the bus
    /// (GetConnectionUnixUser) and cached per unique name until that name vanishes.
    /// Blocks for one round trip to the bus on a cache miss: on the loop thread, use the
    /// completion form.
    public func unixUser(of name: String) throws(DBusError) -> UInt32 {
        if let uid = cachedUID(name) { return uid }
        try DBusNames.requireBusName(name)
        if name.hasPrefix(":") { try enableOwnerTracking() }
        guard let uid = try busCall("GetConnectionUnixUser", [.string(name)]).first?.uint32 else {
            throw .failed("unexpected GetConnectionUnixUser reply")
        }
        if name.hasPrefix(":") { cacheUID(name, uid) }
        return uid
    }

    /// Calls `handler` on the loop thread with the unique name of every peer that disconnects
    /// from the bus (NameOwnerChanged with an empty new owner). Subscribes to the signal on the
    /// first registration.
    @discardableResult
    public func onNameVanished(_ handler: @escaping @Sendable (_ uniqueName: String) -> Void) throws(DBusError) -> HandlerToken {
        try enableOwnerTracking()
        return HandlerToken(id: dispatcher.addVanishedHandler(handler))
    }

    /// Calls `handler` on the loop thread when this connection loses a well-known name it owned
    /// (NameLost, e.g. after being replaced).
    @discardableResult
    public func onNameLost(_ handler: @escaping @Sendable (_ name: String) -> Void) -> HandlerToken {
        HandlerToken(id: dispatcher.addNameLostHandler(handler))
    }

    /// Calls `handler` on the loop thread for every received signal matching `rule`.
    @discardableResult
    public func addSignalHandler(_ rule: SignalRule, _ handler: @escaping @Sendable (DBusMessage) -> Void) -> HandlerToken {
        HandlerToken(id: dispatcher.addSubscription(rule, handler))
    }

    /// Removes a handler added with `addSignalHandler`, `onNameVanished` or `onNameLost`.
    public func removeHandler(_ token: HandlerToken) {
        dispatcher.remove(token.id)
    }
}

extension DBusConnection {
    /// Asks the bus's method `member` about bus name `name` without waiting: `completion` gets
    /// the reply on the loop thread (an invalid name fails at once, on the calling thread).
    func askBus(_ member: String, about name: String, timeout: Duration = DBusConnection.defaultTimeout,
                completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        let message: DBusMessage
        do {
            try DBusNames.requireBusName(name)
            message = try busMethodCall(member, name)
        } catch {
            return completion(.failure(error))
        }
        callAsync(message, timeout: timeout, completion: completion)
    }

    /// A call of the bus's method `member` with the one argument `name`.
    func busMethodCall(_ member: String, _ name: String) throws(DBusError) -> DBusMessage {
        try DBusMessage.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                   member: member, arguments: [.string(name)])
    }
}
