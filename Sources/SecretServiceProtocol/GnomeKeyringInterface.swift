import DBusKit

/// gnome-keyring's `org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface` at
/// `/org/freedesktop/secrets`: creating, unlocking and re-keying collections with a password
/// passed in (encoded for a session, like a secret) instead of a prompt. The `coffer` CLI and
/// gnome-keyring's own tools use it.
public enum GnomeKeyringInterface {
    public static let name = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"

    public static let description = InterfaceDescription(name, methods: [
        CreateWithMasterPassword.description, UnlockWithMasterPassword.description,
        ChangeWithMasterPassword.description, ChangeWithPrompt.description,
    ])

    /// Creates a collection protected by `master`.
    public enum CreateWithMasterPassword: DBusMethod {
        public static let interface = GnomeKeyringInterface.name
        public static let name = "CreateWithMasterPassword"

        public struct Input: DBusArguments {
            public var properties: CollectionProperties
            public var master: WireSecret
            public init(properties: CollectionProperties, master: WireSecret) {
                self.properties = properties
                self.master = master
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("attributes", CollectionProperties.self), .init("master", WireSecret.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                properties = try d.next()
                master = try d.next()
            }
            public var argumentValues: [DBusValue] { [properties.dbusValue, master.dbusValue] }
        }

        public typealias Output = CollectionArgument
    }

    /// Unlocks a collection with its password.
    public enum UnlockWithMasterPassword: DBusMethod {
        public static let interface = GnomeKeyringInterface.name
        public static let name = "UnlockWithMasterPassword"

        public struct Input: DBusArguments {
            public var collection: ObjectPath
            public var master: WireSecret
            public init(collection: ObjectPath, master: WireSecret) {
                self.collection = collection
                self.master = master
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("collection", ObjectPath.self), .init("master", WireSecret.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                collection = try d.next()
                master = try d.next()
            }
            public var argumentValues: [DBusValue] { [collection.dbusValue, master.dbusValue] }
        }

        public typealias Output = NoArguments
    }

    /// Changes a collection's password from `original` to `master`.
    public enum ChangeWithMasterPassword: DBusMethod {
        public static let interface = GnomeKeyringInterface.name
        public static let name = "ChangeWithMasterPassword"

        public struct Input: DBusArguments {
            public var collection: ObjectPath
            public var original: WireSecret
            public var master: WireSecret
            public init(collection: ObjectPath, original: WireSecret, master: WireSecret) {
                self.collection = collection
                self.original = original
                self.master = master
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("collection", ObjectPath.self), .init("original", WireSecret.self), .init("master", WireSecret.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                collection = try d.next()
                original = try d.next()
                master = try d.next()
            }
            public var argumentValues: [DBusValue] { [collection.dbusValue, original.dbusValue, master.dbusValue] }
        }

        public typealias Output = NoArguments
    }

    /// Changes a collection's password through a prompt (as `Service.ChangeLock`).
    public enum ChangeWithPrompt: DBusMethod {
        public static let interface = GnomeKeyringInterface.name
        public static let name = "ChangeWithPrompt"
        public typealias Input = CollectionArgument
        public typealias Output = PromptArgument
    }
}
