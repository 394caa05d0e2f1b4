import DBusKit

/// Coffer's own interface on each collection object (`…/collection/<id>`, `…/aliases/<name>`),
/// beside `org.freedesktop.Secret.Collection`, whose properties stay the specification's: what
/// only Coffer knows of a collection. Other providers do not have it.
public enum CofferCollectionInterface {
    public static let name = "org.coffer.Collection"

    public static let description = InterfaceDescription(name, methods: [UnlockWithTPM.description], properties: [
        PropertyDescription(Property.recovery, .string),
    ])

    /// Unlocks the collection through its TPM key slot with the daemon's TPM, and the slot's
    /// PIN when it has one (encoded for a session, like a secret; empty for none). A
    /// wrong PIN counts as a wrong password.
    public enum UnlockWithTPM: DBusMethod {
        public static let interface = CofferCollectionInterface.name
        public static let name = "UnlockWithTPM"

        /// The PIN, as a secret (`secret (oayays)`).
        public typealias Input = SecretArgument

        public typealias Output = NoArguments
    }

    public enum Property {
        /// What the daemon found of damage to the collection's file, found now or set aside
        /// earlier, in the words `coffer collections` uses (`CollectionInfo.recovery`); empty
        /// when there is none.
        public static let recovery = "Recovery"
    }
}
