internal import CDBus

/// Validation of bus, interface, member and error names before they reach libdbus (which
/// aborts on invalid ones). Uses libdbus's own non-aborting `dbus_validate_*` checks.
public enum DBusNames {
    public static func isValidBusName(_ s: String) -> Bool { check(s, dbus_validate_bus_name) }
    public static func isValidInterfaceName(_ s: String) -> Bool { check(s, dbus_validate_interface) }
    public static func isValidMemberName(_ s: String) -> Bool { check(s, dbus_validate_member) }
    public static func isValidErrorName(_ s: String) -> Bool { check(s, dbus_validate_error_name) }

    private static func check(_ s: String,
                              _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t) -> Bool {
        if s.isEmpty || s.utf8.contains(0) { return false }
        return s.withCString { validator($0, nil) } != 0
    }

    static func requireBusName(_ s: String) throws(DBusError) {
        guard isValidBusName(s) else { throw .invalidArgs("invalid bus name '\(s)'") }
    }
    static func requireInterface(_ s: String) throws(DBusError) {
        guard isValidInterfaceName(s) else { throw .invalidArgs("invalid interface name '\(s)'") }
    }
    static func requireMember(_ s: String) throws(DBusError) {
        guard isValidMemberName(s) else { throw .invalidArgs("invalid member name '\(s)'") }
    }
    static func requireErrorName(_ s: String) throws(DBusError) {
        guard isValidErrorName(s) else { throw .invalidArgs("invalid error name '\(s)'") }
    }
}
