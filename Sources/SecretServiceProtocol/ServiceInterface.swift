import DBusKit

/// `org.freedesktop.Secret.Service` at `/org/freedesktop/secrets`: sessions, collections,
/// search, locking, secrets of many items at once, aliases.
public enum ServiceInterface {
    public static let name = "org.freedesktop.Secret.Service"

    public static let description = InterfaceDescription(name, methods: [
        OpenSession.description, CreateCollection.description, SearchItems.description, Unlock.description,
        Lock.description, LockService.description, ChangeLock.description, GetSecrets.description,
        ReadAlias.description, SetAlias.description,
    ], properties: [
        PropertyDescription(Property.collections, .objectPathArray),
    ], signals: [
        SignalDescription(Signal.collectionCreated, [.init("collection", .objectPath)]),
        SignalDescription(Signal.collectionDeleted, [.init("collection", .objectPath)]),
        SignalDescription(Signal.collectionChanged, [.init("collection", .objectPath)]),
    ])

    public enum Property {
        public static let collections = "Collections"
    }

    public enum Signal {
        public static let collectionCreated = "CollectionCreated"
        public static let collectionDeleted = "CollectionDeleted"
        public static let collectionChanged = "CollectionChanged"
    }

    /// Opens a transfer session: `plain` (input an empty string) or
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7` (input the client's public key).
    public enum OpenSession: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "OpenSession"

        public struct Input: DBusArguments {
            public var algorithm: String
            public var input: DBusVariant
            public init(algorithm: String, input: DBusValue) {
                self.algorithm = algorithm
                self.input = DBusVariant(input)
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("algorithm", String.self), .init("input", DBusVariant.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                algorithm = try d.next()
                input = try d.next()
            }
            public var argumentValues: [DBusValue] { [algorithm.dbusValue, input.dbusValue] }
        }

        public struct Output: DBusArguments {
            public var output: DBusVariant
            public var session: ObjectPath
            public init(output: DBusValue, session: ObjectPath) {
                self.output = DBusVariant(output)
                self.session = session
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("output", DBusVariant.self), .init("result", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                output = try d.next()
                session = try d.next()
            }
            public var argumentValues: [DBusValue] { [output.dbusValue, session.dbusValue] }
        }
    }

    /// Creates a collection (after a prompt), or returns the one `alias` already names.
    public enum CreateCollection: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "CreateCollection"

        public struct Input: DBusArguments {
            public var properties: CollectionProperties
            public var alias: String
            public init(properties: CollectionProperties, alias: String) {
                self.properties = properties
                self.alias = alias
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("properties", CollectionProperties.self), .init("alias", String.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                properties = try d.next()
                alias = try d.next()
            }
            public var argumentValues: [DBusValue] { [properties.dbusValue, alias.dbusValue] }
        }

        public struct Output: DBusArguments {
            /// `/` when a prompt must run first.
            public var collection: ObjectPath
            /// `/` when the collection was there already.
            public var prompt: ObjectPath
            public init(collection: ObjectPath, prompt: ObjectPath) {
                self.collection = collection
                self.prompt = prompt
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("collection", ObjectPath.self), .init("prompt", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                collection = try d.next()
                prompt = try d.next()
            }
            public var argumentValues: [DBusValue] { [collection.dbusValue, prompt.dbusValue] }
        }
    }

    /// Items of every collection whose attributes include all of `attributes`.
    public enum SearchItems: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "SearchItems"
        public typealias Input = AttributesArgument

        public struct Output: DBusArguments {
            public var unlocked: [ObjectPath]
            public var locked: [ObjectPath]
            public init(unlocked: [ObjectPath], locked: [ObjectPath]) {
                self.unlocked = unlocked
                self.locked = locked
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("unlocked", [ObjectPath].self), .init("locked", [ObjectPath].self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                unlocked = try d.next()
                locked = try d.next()
            }
            public var argumentValues: [DBusValue] { [unlocked.dbusValue, locked.dbusValue] }
        }
    }

    /// Unlocks collections (or the collections of items): those already unlocked at once, the
    /// others through the prompt returned.
    public enum Unlock: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "Unlock"
        public typealias Input = ObjectsArgument

        public struct Output: DBusArguments {
            public var unlocked: [ObjectPath]
            /// `/` when nothing needed a prompt.
            public var prompt: ObjectPath
            public init(unlocked: [ObjectPath], prompt: ObjectPath) {
                self.unlocked = unlocked
                self.prompt = prompt
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("unlocked", [ObjectPath].self), .init("prompt", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                unlocked = try d.next()
                prompt = try d.next()
            }
            public var argumentValues: [DBusValue] { [unlocked.dbusValue, prompt.dbusValue] }
        }
    }

    /// Locks collections; returns those locked.
    public enum Lock: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "Lock"
        public typealias Input = ObjectsArgument

        public struct Output: DBusArguments {
            public var locked: [ObjectPath]
            /// Always `/`: locking needs no prompt.
            public var prompt: ObjectPath
            public init(locked: [ObjectPath], prompt: ObjectPath) {
                self.locked = locked
                self.prompt = prompt
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("locked", [ObjectPath].self), .init("Prompt", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                locked = try d.next()
                prompt = try d.next()
            }
            public var argumentValues: [DBusValue] { [locked.dbusValue, prompt.dbusValue] }
        }
    }

    /// Locks every collection (and empties the session collection, as gnome-keyring does).
    public enum LockService: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "LockService"
        public typealias Input = NoArguments
        public typealias Output = NoArguments
    }

    /// Changes a collection's password through a prompt.
    public enum ChangeLock: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "ChangeLock"
        public typealias Input = CollectionArgument
        public typealias Output = PromptArgument
    }

    /// The secrets of many items at once, encoded for `session`.
    public enum GetSecrets: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "GetSecrets"

        public struct Input: DBusArguments {
            public var items: [ObjectPath]
            public var session: ObjectPath
            public init(items: [ObjectPath], session: ObjectPath) {
                self.items = items
                self.session = session
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("items", [ObjectPath].self), .init("session", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                items = try d.next()
                session = try d.next()
            }
            public var argumentValues: [DBusValue] { [items.dbusValue, session.dbusValue] }
        }

        public struct Output: DBusArguments {
            public var secrets: [ObjectPath: WireSecret]
            public init(secrets: [ObjectPath: WireSecret]) { self.secrets = secrets }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("secrets", [ObjectPath: WireSecret].self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { secrets = try d.next() }
            public var argumentValues: [DBusValue] { [secrets.dbusValue] }
        }
    }

    /// The collection an alias names (`/` for none).
    public enum ReadAlias: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "ReadAlias"

        public struct Input: DBusArguments {
            public var name: String
            public init(name: String) { self.name = name }
            public static var argumentDescriptions: [ArgumentDescription] { [.init("name", String.self)] }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { name = try d.next() }
            public var argumentValues: [DBusValue] { [name.dbusValue] }
        }

        public typealias Output = CollectionArgument
    }

    /// Points an alias at a collection (`/` removes it).
    public enum SetAlias: DBusMethod {
        public static let interface = ServiceInterface.name
        public static let name = "SetAlias"

        public struct Input: DBusArguments {
            public var name: String
            public var collection: ObjectPath
            public init(name: String, collection: ObjectPath) {
                self.name = name
                self.collection = collection
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("name", String.self), .init("collection", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                name = try d.next()
                collection = try d.next()
            }
            public var argumentValues: [DBusValue] { [name.dbusValue, collection.dbusValue] }
        }

        public typealias Output = NoArguments
    }
}
