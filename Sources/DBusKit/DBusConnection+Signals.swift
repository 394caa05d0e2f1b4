extension DBusConnection {
    /// Emits a signal from `path`. With `destination` (a unique or well-known name) the signal
    /// is unicast to that peer only, as `Prompt.Completed` should be. Emitted by the loop thread
    /// while follow-ups wait (`postFollowUp`), it is sent after them, and a failure to send it
    /// then (the connection lost) is not reported.
    public func emitSignal(path: ObjectPath, interface: String, member: String,
                           arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        let message = try DBusMessage.signal(path: path, interface: interface, member: member,
                                             arguments: arguments, destination: destination)
        if loop.queueBehindFollowUps({ [self] in _ = try? send(message) }) { return }
        try send(message)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged(interface, changed, invalidated)`
    /// from `path`; `changed` is sent as `a{sv}` sorted by name.
    public func emitPropertiesChanged(path: ObjectPath, interface: String,
                                      changed: [String: DBusValue], invalidated: [String] = []) throws(DBusError) {
        try DBusNames.requireInterface(interface)
        try emitSignal(path: path, interface: StandardInterface.properties, member: "PropertiesChanged",
                       arguments: [.string(interface), .variantDictionary(changed), .stringArray(invalidated)])
    }
}
