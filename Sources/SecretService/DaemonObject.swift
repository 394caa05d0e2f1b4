import DBusKit
import SecretServiceProtocol

/// `/org/coffer/Daemon`: `org.coffer.Daemon`'s read-only properties over what cofferd tells of
/// itself.
struct DaemonObject: DBusObject {
    let description: CofferDaemonDescription

    var interfaces: [InterfaceDescription] { [CofferDaemonInterface.description] }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        throw DBusError.unknownMethod("\(CofferDaemonInterface.name) has no method \(call.member)")
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        guard let value = description.value(of: name) else { throw DBusError.unknownProperty("\(interface) has no property \(name)") }
        return value
    }
}

extension SecretServer {
    /// Serves `description` at `/org/coffer/Daemon` on this server's connection (call after
    /// `start()`, whose policy, callers of this Unix user only, it shares).
    public func describe(as description: CofferDaemonDescription) {
        connection.objectServer.register(path: CofferDaemonInterface.path, object: DaemonObject(description: description))
    }
}
