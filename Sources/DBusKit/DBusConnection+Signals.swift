extension DBusConnection {
    /// Emits a signal from `path`. With `destination` (a unique or well-known name) the signal
    /// is unicast to that peer only, as `Prompt.Completed` should be.
    public func emitSignal(path: ObjectPath, interface: String, member: String,
                           arguments: [DBusValue] = [], destination: String? = nil) throws(DBusError) {
        let message = try DBusMessage.signal(path: path, interface: interface, member: member,
                                             arguments: arguments, destination: destination)
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
