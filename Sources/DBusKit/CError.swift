internal import CDBus

/// Runs `body` with an initialised libdbus error struct. If `body` returns nil, the error it set
/// (or `fallback`) is thrown as a Swift `DBusError`, strings copied before the struct is freed.
func withCError<T>(fallback: @autoclosure () -> DBusError,
                   _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T?) throws(DBusError) -> T {
    var raw = CDBus.DBusError()
    dbus_error_init(&raw)
    defer { if dbus_error_is_set(&raw) != 0 { dbus_error_free(&raw) } }
    if let value = body(&raw), dbus_error_is_set(&raw) == 0 { return value }
    guard dbus_error_is_set(&raw) != 0 else { throw fallback() }
    let name = raw.name.map { String(cString: $0) } ?? DBusError.Name.failed
    let message = raw.message.map { String(cString: $0) } ?? ""
    throw DBusError(name: name, message: message)
}
