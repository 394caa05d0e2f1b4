import DBusKit

/// Every interface of the Secret Service and of the Secret portal's backend, and the
/// introspection document generated from them (`dbus/org.freedesktop.Secrets.xml` is this
/// text; `ProtocolDescriptionTests` fails if they drift).
public enum SecretInterfaces {
    /// All interfaces, in the order the document lists them.
    public static let all: [InterfaceDescription] = [
        ServiceInterface.description, GnomeKeyringInterface.description, CollectionInterface.description,
        CofferCollectionInterface.description, ItemInterface.description, SessionInterface.description, PromptInterface.description,
        PortalSecretInterface.description,
    ]

    /// The introspection document of all interfaces.
    public static var document: String {
        InterfaceDescription.introspectionDocument(all, comment: """
            The interfaces cofferd serves, as its own Introspect answers them (objects also implement
                 org.freedesktop.DBus.Introspectable, .Properties and .Peer):
                 /org/freedesktop/secrets                     Service + gnome-keyring's internal interface
                 /org/freedesktop/secrets/collection/ID       Collection + Coffer's own (also at /aliases/NAME)
                 /org/freedesktop/secrets/collection/ID/N     Item
                 /org/freedesktop/secrets/session/sN          Session
                 /org/freedesktop/secrets/prompt/pN           Prompt
                 /org/freedesktop/portal/desktop              the Secret portal's backend (xdg-desktop-portal only)
                 Generated from Sources/SecretServiceProtocol: run scripts/generate-introspection.
            """)
    }
}
