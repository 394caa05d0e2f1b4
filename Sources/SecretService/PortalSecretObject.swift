import CofferCore
import DBusKit
import SecretServiceProtocol

/// `/org/freedesktop/portal/desktop`: `org.freedesktop.impl.portal.Secret` over a
/// `SecretPortal`.
struct PortalSecretObject: DBusObject {
    let portal: SecretPortal

    var interfaces: [InterfaceDescription] { [PortalSecretInterface.description] }

    static let methods = MethodTable<PortalSecretObject>()
        .deferring(PortalSecretInterface.RetrieveSecret.self) { object, input, call in
            object.portal.retrieveSecret(input, call: call)
        }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }

    /// `version` (the only property).
    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        .uint32(PortalSecretInterface.version)
    }
}

extension SecretServer {
    /// Serves the Secret portal's backend (`org.freedesktop.impl.portal.Secret`) at
    /// `/org/freedesktop/portal/desktop` on this server's connection, where xdg-desktop-portal
    /// calls it once a `.portal` file names this bus name. Call after `start()`, whose policy
    /// (callers of this Unix user only) it shares. Each request is recorded in `audit` (a
    /// `portal` event) when given.
    /// Where distributions install xdg-desktop-portal.
    public static let standardPortalFrontends: Set<String> = ["/usr/libexec/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal"]

    /// `frontends`: the programs that may call it (xdg-desktop-portal's executable).
    public func startSecretPortal(audit: (any AuditRecorder)? = nil,
                                  frontends: Set<String> = SecretServer.standardPortalFrontends) {
        connection.objectServer.register(path: PortalSecretInterface.path,
                                         object: PortalSecretObject(portal: SecretPortal(server: self, audit: audit, frontends: frontends)))
    }
}
