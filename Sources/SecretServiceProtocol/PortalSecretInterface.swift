import DBusKit

/// `org.freedesktop.impl.portal.Secret` at `/org/freedesktop/portal/desktop`: the backend of
/// xdg-desktop-portal's Secret portal.
///
/// A sandboxed (Flatpak) application asks the portal (`org.freedesktop.portal.Secret`) for
/// its secret; xdg-desktop-portal, which knows the application's id from its sandbox, calls
/// `RetrieveSecret` here with that id and a descriptor to write the secret to. The secret is
/// the application's master secret: random bytes, made once per application id and the same
/// every time after, from which the application derives the keys of its own encrypted storage.
public enum PortalSecretInterface {
    public static let name = "org.freedesktop.impl.portal.Secret"

    /// Where xdg-desktop-portal calls its backends.
    public static let path: ObjectPath = "/org/freedesktop/portal/desktop"

    /// The bus name xdg-desktop-portal owns. It alone vouches for the application id it
    /// passes, so its owner is the only caller the backend may answer.
    public static let frontendBusName = "org.freedesktop.portal.Desktop"

    /// The version of the interface served (the `version` property).
    public static let version: UInt32 = 1

    public static let description = InterfaceDescription(name, methods: [
        RetrieveSecret.description,
    ], properties: [
        PropertyDescription(Property.version, .uint32),
    ])

    public enum Property {
        public static let version = "version"
    }

    /// The `response` codes the portal passes on to the application (its `Request::Response`).
    public enum Response: UInt32, Sendable {
        /// The secret was written.
        case success = 0
        /// The user cancelled (e.g. did not unlock the keyring).
        case cancelled = 1
        /// It ended some other way.
        case other = 2
    }

    /// Writes the master secret of application `appID` to `fd`, then answers `response` 0.
    public enum RetrieveSecret: DBusMethod {
        public static let interface = PortalSecretInterface.name
        public static let name = "RetrieveSecret"

        public struct Input: DBusArguments {
            /// The portal's request object (`org.freedesktop.impl.portal.Request`) for this call.
            public var handle: ObjectPath
            /// The application's id, as xdg-desktop-portal found it in its sandbox.
            public var appID: String
            /// Where the secret goes: the write end the application gave the portal.
            public var fd: UnixFileDescriptor
            /// Passed on from the application (only `token` is defined; Coffer ignores it).
            public var options: [String: DBusVariant]

            public init(handle: ObjectPath, appID: String, fd: UnixFileDescriptor, options: [String: DBusVariant] = [:]) {
                self.handle = handle
                self.appID = appID
                self.fd = fd
                self.options = options
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("handle", ObjectPath.self), .init("app_id", String.self), .init("fd", UnixFileDescriptor.self),
                 .init("options", [String: DBusVariant].self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                handle = try d.next()
                appID = try d.next()
                fd = try d.next()
                options = try d.next()
            }
            public var argumentValues: [DBusValue] { [handle.dbusValue, appID.dbusValue, fd.dbusValue, options.dbusValue] }
        }

        public struct Output: DBusArguments {
            /// A `Response` code.
            public var response: UInt32
            /// Nothing is defined; always empty.
            public var results: [String: DBusVariant]

            public init(response: Response, results: [String: DBusVariant] = [:]) {
                self.response = response.rawValue
                self.results = results
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("response", UInt32.self), .init("results", [String: DBusVariant].self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                response = try d.next()
                results = try d.next()
            }
            public var argumentValues: [DBusValue] { [response.dbusValue, results.dbusValue] }
        }
    }
}
