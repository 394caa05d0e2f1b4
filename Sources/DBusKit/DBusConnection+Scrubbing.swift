internal import CDBus
import CofferCrypto

extension DBusMessage {
    /// How many bytes the message takes on the wire (its header and body, as received).
    var wireLength: Int {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &data, &length) != 0, let data else { return 0 }
        // The copy holds what the message holds: wiped before it goes back to the heap.
        wipe(data, Int(length))
        dbus_free(data)
        return Int(length)
    }
}

extension MethodCall {
    /// Overwrites what libdbus keeps of this call's bytes once it has been read: the message's
    /// body goes back to the heap wiped (MessageReader wipes the secrets it takes out of it),
    /// but the connection's receive buffer keeps the raw bytes until later messages cover
    /// them. So the connection sends itself, through the bus, a signal at least as long as the
    /// call (zeros, ignored on arrival), which the buffer receives over them. For a call that
    /// carried a secret in clear (a `plain` session's).
    public func overwriteReceivedBytes() {
        connection.sendPadding(atLeast: message.wireLength)
    }
}

extension DBusConnection {
    /// The signal `overwriteReceivedBytes` sends: to this connection itself, carrying zeros.
    static let paddingPath: ObjectPath = "/org/coffer/Padding"
    static let paddingInterface = "org.coffer.Padding"

    func sendPadding(atLeast length: Int) {
        guard length > 0,
              let signal = try? DBusMessage.signal(path: Self.paddingPath, interface: Self.paddingInterface, member: "Padding",
                                                   arguments: [.bytes([UInt8](repeating: 0, count: length))], destination: uniqueName)
        else { return }
        _ = try? send(signal)
    }
}
