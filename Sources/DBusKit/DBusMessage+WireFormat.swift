internal import CDBus

/// Messages in D-Bus wire format, read and written by libdbus itself (for the fuzz harness,
/// which feeds the daemon's decoding bytes as a connection would read them from its socket).
extension DBusMessage {
    /// The messages at the start of `bytes`, one after another as a connection reads them from
    /// its socket, each locked like a received message. Stops at the first bytes libdbus
    /// rejects or that do not hold a whole message.
    package static func messages(inWireFormat bytes: [UInt8]) -> [DBusMessage] {
        var rest = bytes.map { CChar(bitPattern: $0) }[...]
        var found: [DBusMessage] = []
        while rest.count >= 16, rest.count <= Int(Int32.max) {
            let chunk = Array(rest)
            let needed = Int(dbus_message_demarshal_bytes_needed(chunk, Int32(chunk.count)))
            guard needed > 0, needed <= chunk.count,
                  let raw = dbus_message_demarshal(chunk, Int32(needed), nil) else { break }
            found.append(DBusMessage(adopting: raw, locked: true))
            rest = rest.dropFirst(needed)
        }
        return found
    }

    /// This message in wire format, as sent by `sender` with `serial` (what a bus delivers).
    package func wireFormat(serial: UInt32, sender: String) -> [UInt8] {
        dbus_message_set_serial(raw, serial)
        guard sender.withCString({ dbus_message_set_sender(raw, $0) }) != 0 else {
            fatalError("libdbus: out of memory")
        }
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &data, &length) != 0, let data else { fatalError("libdbus: out of memory") }
        defer { dbus_free(data) }
        return (0..<Int(length)).map { UInt8(bitPattern: data[$0]) }
    }
}
