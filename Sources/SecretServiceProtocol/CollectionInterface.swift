import DBusKit

/// `org.freedesktop.Secret.Collection` at `…/collection/<id>` (and `…/aliases/<name>`).
public enum CollectionInterface {
    public static let name = "org.freedesktop.Secret.Collection"

    public static let description = InterfaceDescription(name, methods: [
        Delete.description, SearchItems.description, CreateItem.description,
    ], properties: [
        PropertyDescription(Property.items, .objectPathArray),
        PropertyDescription(Property.label, .string, access: .readWrite),
        PropertyDescription(Property.locked, .boolean),
        PropertyDescription(Property.created, .uint64),
        PropertyDescription(Property.modified, .uint64),
    ], signals: [
        SignalDescription(Signal.itemCreated, [.init("item", .objectPath)]),
        SignalDescription(Signal.itemDeleted, [.init("item", .objectPath)]),
        SignalDescription(Signal.itemChanged, [.init("item", .objectPath)]),
    ])

    public enum Property {
        public static let items = "Items"
        public static let label = "Label"
        public static let locked = "Locked"
        public static let created = "Created"
        public static let modified = "Modified"
    }

    public enum Signal {
        public static let itemCreated = "ItemCreated"
        public static let itemDeleted = "ItemDeleted"
        public static let itemChanged = "ItemChanged"
    }

    /// Deletes the collection and its items.
    public enum Delete: DBusMethod {
        public static let interface = CollectionInterface.name
        public static let name = "Delete"
        public typealias Input = NoArguments
        public typealias Output = PromptArgument
    }

    /// Items of this collection whose attributes include all of `attributes`.
    public enum SearchItems: DBusMethod {
        public static let interface = CollectionInterface.name
        public static let name = "SearchItems"
        public typealias Input = AttributesArgument

        public struct Output: DBusArguments {
            public var results: [ObjectPath]
            public init(results: [ObjectPath]) { self.results = results }
            public static var argumentDescriptions: [ArgumentDescription] { [.init("results", [ObjectPath].self)] }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { results = try d.next() }
            public var argumentValues: [DBusValue] { [results.dbusValue] }
        }
    }

    /// Stores an item; with `replace`, an item with the same attributes is updated instead.
    public enum CreateItem: DBusMethod {
        public static let interface = CollectionInterface.name
        public static let name = "CreateItem"

        public struct Input: DBusArguments {
            public var properties: ItemProperties
            public var secret: WireSecret
            public var replace: Bool
            public init(properties: ItemProperties, secret: WireSecret, replace: Bool) {
                self.properties = properties
                self.secret = secret
                self.replace = replace
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("properties", ItemProperties.self), .init("secret", WireSecret.self), .init("replace", Bool.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                properties = try d.next()
                secret = try d.next()
                replace = try d.next()
            }
            public var argumentValues: [DBusValue] { [properties.dbusValue, secret.dbusValue, replace.dbusValue] }
        }

        public struct Output: DBusArguments {
            public var item: ObjectPath
            /// Always `/` from cofferd; other providers may ask first.
            public var prompt: ObjectPath
            public init(item: ObjectPath, prompt: ObjectPath) {
                self.item = item
                self.prompt = prompt
            }
            public static var argumentDescriptions: [ArgumentDescription] {
                [.init("item", ObjectPath.self), .init("prompt", ObjectPath.self)]
            }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) {
                item = try d.next()
                prompt = try d.next()
            }
            public var argumentValues: [DBusValue] { [item.dbusValue, prompt.dbusValue] }
        }
    }
}
