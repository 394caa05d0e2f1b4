import FoundationEssentials
internal import SystemKit

extension DBusConnection {
    /// The session bus if one is running, without ever starting one: the address in
    /// `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` if that socket exists (what
    /// libdbus would use, but never its X11 autolaunch, which could start a bus). Nil when
    /// there is none or it cannot be reached.
    public static func runningSessionBus() -> DBusConnection? {
        let environment = ProcessInfo.processInfo.environment
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return try? sessionBus()
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        let socket = runtime + "/bus"
        guard (try? FileStatus.of(socket).kind) == .socket else { return nil }
        return try? DBusConnection(address: "unix:path=" + String(decoding: addressValueEscaping.encode(socket.utf8), as: UTF8.self))
    }

    /// A D-Bus address value: bytes other than `-0-9A-Za-z_/.*` as `%xx`.
    static let addressValueEscaping = PercentEncoding(uppercase: false) { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "*")].contains(byte)
    }
}
