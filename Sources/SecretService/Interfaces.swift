import DBusKit

/// The `org.freedesktop.Secret.*` interfaces as the object server sees them: methods with
/// their signatures (checked before any handler runs), properties and signals.
enum SecretInterface {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let session = "org.freedesktop.Secret.Session"
    static let prompt = "org.freedesktop.Secret.Prompt"
    /// gnome-keyring's interface for password changes and unlocking without a prompt, which
    /// the `coffer` CLI uses too.
    static let gnomeKeyring = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"

    static let serviceDescription = InterfaceDescription(service, methods: [
        MethodDescription("OpenSession", in: [.init("algorithm", .string), .init("input", .variant)],
                          out: [.init("output", .variant), .init("result", .objectPath)]),
        MethodDescription("CreateCollection", in: [.init("properties", .variantDictionary), .init("alias", .string)],
                          out: [.init("collection", .objectPath), .init("prompt", .objectPath)]),
        MethodDescription("SearchItems", in: [.init("attributes", .stringDictionary)],
                          out: [.init("unlocked", .objectPathArray), .init("locked", .objectPathArray)]),
        MethodDescription("Unlock", in: [.init("objects", .objectPathArray)],
                          out: [.init("unlocked", .objectPathArray), .init("prompt", .objectPath)]),
        MethodDescription("Lock", in: [.init("objects", .objectPathArray)],
                          out: [.init("locked", .objectPathArray), .init("Prompt", .objectPath)]),
        MethodDescription("LockService"),
        MethodDescription("ChangeLock", in: [.init("collection", .objectPath)], out: [.init("prompt", .objectPath)]),
        MethodDescription("GetSecrets", in: [.init("items", .objectPathArray), .init("session", .objectPath)],
                          out: [.init("secrets", "a{o(oayays)}")]),
        MethodDescription("ReadAlias", in: [.init("name", .string)], out: [.init("collection", .objectPath)]),
        MethodDescription("SetAlias", in: [.init("name", .string), .init("collection", .objectPath)]),
    ], properties: [
        PropertyDescription("Collections", .objectPathArray),
    ], signals: [
        SignalDescription("CollectionCreated", [.init("collection", .objectPath)]),
        SignalDescription("CollectionDeleted", [.init("collection", .objectPath)]),
        SignalDescription("CollectionChanged", [.init("collection", .objectPath)]),
    ])

    static let gnomeKeyringDescription = InterfaceDescription(gnomeKeyring, methods: [
        MethodDescription("CreateWithMasterPassword", in: [.init("attributes", .variantDictionary), .init("master", "(oayays)")],
                          out: [.init("collection", .objectPath)]),
        MethodDescription("UnlockWithMasterPassword", in: [.init("collection", .objectPath), .init("master", "(oayays)")]),
        MethodDescription("ChangeWithMasterPassword", in: [.init("collection", .objectPath), .init("original", "(oayays)"),
                                                           .init("master", "(oayays)")]),
        MethodDescription("ChangeWithPrompt", in: [.init("collection", .objectPath)], out: [.init("prompt", .objectPath)]),
    ])

    static let collectionDescription = InterfaceDescription(collection, methods: [
        MethodDescription("Delete", out: [.init("prompt", .objectPath)]),
        MethodDescription("SearchItems", in: [.init("attributes", .stringDictionary)], out: [.init("results", .objectPathArray)]),
        MethodDescription("CreateItem", in: [.init("properties", .variantDictionary), .init("secret", "(oayays)"),
                                             .init("replace", .boolean)],
                          out: [.init("item", .objectPath), .init("prompt", .objectPath)]),
    ], properties: [
        PropertyDescription("Items", .objectPathArray),
        PropertyDescription("Label", .string, access: .readWrite),
        PropertyDescription("Locked", .boolean),
        PropertyDescription("Created", .uint64),
        PropertyDescription("Modified", .uint64),
    ], signals: [
        SignalDescription("ItemCreated", [.init("item", .objectPath)]),
        SignalDescription("ItemDeleted", [.init("item", .objectPath)]),
        SignalDescription("ItemChanged", [.init("item", .objectPath)]),
    ])

    static let itemDescription = InterfaceDescription(item, methods: [
        MethodDescription("Delete", out: [.init("Prompt", .objectPath)]),
        MethodDescription("GetSecret", in: [.init("session", .objectPath)], out: [.init("secret", "(oayays)")]),
        MethodDescription("SetSecret", in: [.init("secret", "(oayays)")]),
    ], properties: [
        PropertyDescription("Locked", .boolean),
        PropertyDescription("Attributes", .stringDictionary, access: .readWrite),
        PropertyDescription("Label", .string, access: .readWrite),
        PropertyDescription("Type", .string, access: .readWrite),
        PropertyDescription("Created", .uint64),
        PropertyDescription("Modified", .uint64),
    ])

    static let sessionDescription = InterfaceDescription(session, methods: [MethodDescription("Close")])

    static let promptDescription = InterfaceDescription(prompt, methods: [
        MethodDescription("Prompt", in: [.init("window-id", .string)]),
        MethodDescription("Dismiss"),
    ], signals: [
        SignalDescription("Completed", [.init("dismissed", .boolean), .init("result", .variant)]),
    ])
}
