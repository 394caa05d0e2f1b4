import DBusKit

/// Coffer's own interface on each collection object (`…/collection/<id>`, `…/aliases/<name>`),
/// beside `org.freedesktop.Secret.Collection`, whose properties stay the specification's: what
/// only Coffer knows of a collection. Other providers do not have it.
public enum CofferCollectionInterface {
    public static let name = "org.coffer.Collection"

    public static let description = InterfaceDescription(name, properties: [
        PropertyDescription(Property.recovery, .string),
    ])

    public enum Property {
        /// What the daemon found of damage to the collection's file, found now or set aside
        /// earlier, in the words `coffer collections` uses (`CollectionInfo.recovery`); empty
        /// when there is none.
        public static let recovery = "Recovery"
    }
}
