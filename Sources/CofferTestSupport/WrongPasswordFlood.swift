import SystemKit

/// Wrong passwords sent to a Secret Service all at once, as a hostile program would: for the
/// unlock-throttle tests and `coffer-unlock-flood`.
public enum WrongPasswordFlood {
    /// A python3 (dbus-python) program that sends `count` wrong passwords for `login` at once,
    /// each from a connection and a thread of its own (gnome-keyring's internal interface,
    /// UnlockWithMasterPassword, plain session), prints the D-Bus error name of each answer and
    /// waits until killed.
    public static func script(count: Int) -> String {
        """
        import dbus, os, threading
        def guess(n):
            bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
            service = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
            _, session = dbus.Interface(service, "org.freedesktop.Secret.Service").OpenSession("plain", dbus.String("", variant_level=1))
            internal = dbus.Interface(service, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
            try:
                internal.UnlockWithMasterPassword("/org/freedesktop/secrets/collection/login",
                    dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"wrong %d" % n), "text/plain")), timeout=3600)
            except dbus.exceptions.DBusException as error:
                print(error.get_dbus_name(), flush=True)
        for n in range(\(count)):
            threading.Thread(target=guess, args=(n,), daemon=True).start()
        threading.Event().wait()
        """
    }

    /// The wrong passwords in a row a collection's attempts file (`<id>.attempts` in the store)
    /// counts: its first four bytes, little-endian; 0 when it has none.
    public static func wrongPasswordsCounted(inAttemptsFile path: String) -> Int {
        guard let bytes = try? FileSystem.contents(of: path), bytes.count >= 4 else { return 0 }
        return bytes.prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
