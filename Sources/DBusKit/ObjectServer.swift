import Synchronization

/// Serves objects on a connection: routes method calls to `DBusObject`s resolved per path by
/// registered `DBusObjectTree`s, and implements the standard interfaces for them.
///
/// Get it from `connection.objectServer`, register a tree under a path prefix, then `run()` the
/// connection. For free you get:
/// - `Introspectable.Introspect` on every object, on every intermediate path below a prefix that
///   has children, and on every ancestor of a prefix (`/`, `/org`, …), with `<node name=…>` children;
/// - `Properties.Get/GetAll/Set` with `UnknownInterface`, `UnknownProperty`, `PropertyReadOnly`,
///   and `InvalidArgs` for a value of the wrong type;
/// - a signature check of every call against the method's in-signature (`InvalidArgs`);
/// - `UnknownObject`, `UnknownInterface`, `UnknownMethod` errors;
/// - an optional `accessPolicy` that rejects callers with `AccessDenied`.
/// (`Peer.Ping`/`GetMachineId` are answered by libdbus itself.)
public final class ObjectServer: Sendable {
    private weak let connection: DBusConnection?
    /// The registered trees by prefix.
    private let registrations = Mutex<[ObjectPath: any DBusObjectTree]>([:])
    /// The policy closure, boxed in a struct: a bare function type stored in the generic
    /// `Mutex` would be reabstracted on every `inout` access, and the thunks written back
    /// would pile up, making each call slower than the last.
    private struct Policy: Sendable {
        let check: @Sendable (_ sender: String, _ uid: UInt32?) -> Bool
    }
    private let policy = Mutex<Policy?>(nil)

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Method calls of senders whose uid the bus is being asked for, in arrival order.
    private let held = Mutex<[String: [DBusMessage]]>([:])
    /// Calls held at most per sender while its uid is asked (a client sends its first calls
    /// without waiting; past this they get LimitsExceeded).
    static let maxHeldCallsPerSender = 64

    /// Decides per call whether a caller may use the served objects; `uid` is the caller's Unix
    /// uid (nil if the bus could not tell). Rejected calls get `AccessDenied`. The uid is looked
    /// up (and cached) only while a policy is set, without blocking the loop: a new sender's
    /// calls wait, in order, for the bus's answer. Setting a policy turns on owner tracking
    /// (one call to the bus, on the setting thread) so that the cache forgets senders that leave.
    public var accessPolicy: (@Sendable (_ sender: String, _ uid: UInt32?) -> Bool)? {
        get { policy.withLock { $0?.check } }
        set {
            if newValue != nil { try? connection?.enableOwnerTracking() }
            policy.withLock { $0 = newValue.map(Policy.init) }
        }
    }

    /// Serves every path equal to or below `prefix` from `tree` (replacing an earlier
    /// registration of the same prefix). The longest matching prefix wins.
    public func register(prefix: ObjectPath, tree: any DBusObjectTree) {
        registrations.withLock { $0[prefix] = tree }
    }

    /// Serves a single object at exactly `path`.
    public func register(path: ObjectPath, object: any DBusObject) {
        register(prefix: path, tree: ClosureObjectTree(object: { $0 == path ? object : nil }))
    }

    // MARK: Dispatch (loop thread)

    private static let objectStandardInterfaces = [StandardInterface.introspectableDescription,
                                                   StandardInterface.peerDescription,
                                                   StandardInterface.propertiesDescription]
    private static let intermediateStandardInterfaces = [StandardInterface.introspectableDescription,
                                                         StandardInterface.peerDescription]

    /// What a path resolves to.
    private enum Node {
        case object(any DBusObject, tree: any DBusObjectTree)
        /// No object, but introspectable (ancestor of a prefix, a prefix, or a path with children).
        case intermediate(tree: (any DBusObjectTree)?)
        case none
    }

    private func resolve(_ path: ObjectPath) -> (Node, [ObjectPath: any DBusObjectTree]) {
        let regs = registrations.withLock { $0 }
        var owner: (prefix: ObjectPath, tree: any DBusObjectTree)?
        for (prefix, tree) in regs where path.isInside(prefix) {
            if let found = owner, found.prefix.rawValue.utf8.count >= prefix.rawValue.utf8.count { continue }
            owner = (prefix, tree)
        }
        if let (prefix, tree) = owner {
            if let object = tree.object(at: path) { return (.object(object, tree: tree), regs) }
            if path == prefix { return (.intermediate(tree: tree), regs) }
            return (.none, regs)   // may still have children; checked lazily for Introspect
        }
        if regs.keys.contains(where: { $0.isInside(path) }) { return (.intermediate(tree: nil), regs) }
        return (.none, regs)
    }

    /// Child elements of `path`: from its tree, plus next elements of prefixes registered below it.
    private func children(of path: ObjectPath, tree: (any DBusObjectTree)?,
                          registrations: [ObjectPath: any DBusObjectTree]) -> [String] {
        var names: [String] = tree?.childNames(of: path) ?? []
        let depth = path.elements.count
        for prefix in registrations.keys where prefix != path && prefix.isInside(path) {
            names.append(prefix.elements[depth])
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted && ObjectPath.isValid("/" + $0) }
    }

    func handle(_ message: DBusMessage) {
        guard let connection else { return }
        let sender = message.sender ?? ""
        guard accessPolicy != nil, !sender.isEmpty else { return decide(message, uid: nil, on: connection) }
        guard let uid = connection.knownUnixUser(of: sender) else { return hold(message, until: connection) }
        decide(message, uid: uid, on: connection)
    }

    /// Serves `message` if the access policy (if any) lets its sender, with `uid`, through.
    private func decide(_ message: DBusMessage, uid: UInt32?, on connection: DBusConnection) {
        guard let path = message.path, let member = message.member else { return }
        let sender = message.sender ?? ""
        if let check = accessPolicy, !check(sender, uid) {
            return Self.fail(message, on: connection,
                             .accessDenied("caller \(sender) (uid \(uid.map(String.init) ?? "unknown")) may not use this service"))
        }
        serve(message, connection: connection, path: path, member: member)
    }

    /// Answers `message` with `error`.
    private static func fail(_ message: DBusMessage, on connection: DBusConnection, _ error: DBusError) {
        guard let path = message.path, let member = message.member else { return }
        MethodCall(message: message, connection: connection, path: path, interface: message.interface ?? "",
                   member: member, arguments: [], expectedReplySignature: nil).fail(error)
    }

    /// Keeps a call of a sender whose uid is not known yet; the first one asks the bus, and its
    /// answer decides every kept call, in order (a sender the bus cannot tell has no uid). A
    /// call past `maxHeldCallsPerSender` is refused at once, so its error may reach the
    /// client before the replies to the calls kept.
    private func hold(_ message: DBusMessage, until connection: DBusConnection) {
        let sender = message.sender ?? ""
        enum Outcome { case asks, waits, refused }
        let outcome = held.withLock { held -> Outcome in
            guard var waiting = held[sender] else {
                held[sender] = [message]
                return .asks
            }
            guard waiting.count < Self.maxHeldCallsPerSender else { return .refused }
            waiting.append(message)
            held[sender] = waiting
            return .waits
        }
        switch outcome {
        case .waits:
            return
        case .refused:
            Self.fail(message, on: connection,
                      .limitsExceeded("more than \(Self.maxHeldCallsPerSender) calls sent before the bus said who \(sender) is"))
        case .asks:
            connection.unixUser(of: sender) { [weak self] result in
                guard let self else { return }
                let waiting = held.withLock { $0.removeValue(forKey: sender) } ?? []
                for call in waiting { decide(call, uid: try? result.get(), on: connection) }
            }
        }
    }

    /// Dispatches a call the access policy let through.
    private func serve(_ message: DBusMessage, connection: DBusConnection, path: ObjectPath, member: String) {
        let requestedInterface = message.interface
        let signature = message.signature.rawValue

        func fail(_ error: DBusError, interface: String = requestedInterface ?? "") {
            MethodCall(message: message, connection: connection, path: path, interface: interface,
                       member: member, arguments: [], expectedReplySignature: nil).fail(error)
        }

        var (node, regs) = resolve(path)
        var objectInterfaces: [InterfaceDescription] = []
        var childTree: (any DBusObjectTree)?
        switch node {
        case .object(let object, let tree):
            objectInterfaces = object.interfaces
            childTree = tree
        case .intermediate(let tree):
            childTree = tree
        case .none:
            // Below a prefix without an object: an intermediate node only if it has children.
            let owner = regs.filter { path.isInside($0.key) }.max { $0.key.rawValue.count < $1.key.rawValue.count }
            if let tree = owner?.value, !children(of: path, tree: tree, registrations: regs).isEmpty {
                node = .intermediate(tree: tree)
                childTree = tree
            } else {
                fail(.unknownObject("no object at path \(path)" + (owner?.value.absence(at: path).map { ": \($0)" } ?? "")))
                return
            }
        }

        // Which interface and method is meant?
        let standard: [InterfaceDescription]
        if case .object = node {
            standard = Self.objectStandardInterfaces
        } else {
            standard = Self.intermediateStandardInterfaces
        }
        let all = [objectInterfaces, standard].joined()
        let target: (InterfaceDescription, MethodDescription)
        if let requestedInterface {
            guard let iface = all.first(where: { $0.name == requestedInterface }) else {
                if case .object = node {
                    fail(.unknownInterface("object \(path) has no interface \(requestedInterface)"))
                } else {
                    fail(.unknownObject("no object at path \(path) (only introspection)"))
                }
                return
            }
            guard let method = iface.method(named: member) else {
                fail(.unknownMethod("interface \(requestedInterface) has no method \(member)"))
                return
            }
            target = (iface, method)
        } else {
            guard let found = all.lazy.compactMap({ i in i.method(named: member).map { (i, $0) } }).first else {
                fail(.unknownMethod("object \(path) has no method \(member)"))
                return
            }
            target = found
        }
        let (iface, method) = target

        guard signature == method.inSignature else {
            fail(.invalidArgs("\(iface.name).\(member) expects arguments of type '\(method.inSignature)', got '\(signature)'"),
                 interface: iface.name)
            return
        }
        let arguments: [DBusValue]
        do {
            arguments = try message.arguments(secretLimits: method.inSecretLimits)
        } catch where error.name == DBusError.Name.limitsExceeded {
            fail(error, interface: iface.name)
            return
        } catch {
            fail(.invalidArgs("cannot decode arguments: \(error.message)"), interface: iface.name)
            return
        }
        let call = MethodCall(message: message, connection: connection, path: path, interface: iface.name,
                              member: member, arguments: arguments,
                              expectedReplySignature: method.outSignature)

        switch iface.name {
        case StandardInterface.introspectable:
            let kids = children(of: path, tree: childTree, registrations: regs)
            call.reply([.string(Introspection.xml(interfaces: Array(all), children: kids))])
        case StandardInterface.peer:
            call.fail(DBusError.unknownMethod("Peer is handled by libdbus"))
        case StandardInterface.properties:
            guard case .object(let object, _) = node else {
                call.fail(DBusError.unknownInterface("no properties at \(path)"))
                return
            }
            PropertiesHandler.handle(call, object: object, interfaces: objectInterfaces)
        default:
            guard case .object(let object, _) = node else { return }
            do {
                switch try object.handleMethod(call) {
                case .reply(let values): call.reply(values)
                case .deferred: break
                }
            } catch {
                call.fail(error)
            }
        }
    }
}
