/// Which signals a handler registered with `DBusConnection.addSignalHandler` receives. Every
/// non-nil field must match. This filters locally only: broadcast signals from other peers also
/// need a bus match rule (`addMatch`); unicast signals addressed to this connection always arrive.
public struct SignalRule: Sendable, Hashable {
    public var interface: String?
    public var member: String?
    public var path: ObjectPath?
    /// The sender's unique name (signals always carry the unique name, not a well-known one).
    public var sender: String?

    public init(interface: String? = nil, member: String? = nil, path: ObjectPath? = nil, sender: String? = nil) {
        self.interface = interface
        self.member = member
        self.path = path
        self.sender = sender
    }

    package func matches(_ h: SignalHeader) -> Bool {
        if let interface, interface != h.interface { return false }
        if let member, member != h.member { return false }
        if let path, path != h.path { return false }
        if let sender, sender != h.sender { return false }
        return true
    }

    /// The equivalent bus match rule text (for `addMatch`).
    public var matchRule: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let path { parts.append("path='\(path.rawValue)'") }
        return parts.joined(separator: ",")
    }
}
