import DBusKit

/// `org.freedesktop.Secret.Item` at `…/collection/<id>/<n>`.
public enum ItemInterface {
    public static let name = "org.freedesktop.Secret.Item"

    public static let description = InterfaceDescription(name, methods: [
        Delete.description, GetSecret.description, SetSecret.description,
    ], properties: [
        PropertyDescription(Property.locked, .boolean),
        PropertyDescription(Property.attributes, .stringDictionary, access: .readWrite),
        PropertyDescription(Property.label, .string, access: .readWrite),
        PropertyDescription(Property.type, .string, access: .readWrite),
        PropertyDescription(Property.created, .uint64),
        PropertyDescription(Property.modified, .uint64),
    ])

    public enum Property {
        public static let locked = "Locked"
        public static let attributes = "Attributes"
        public static let label = "Label"
        public static let type = "Type"
        public static let created = "Created"
        public static let modified = "Modified"
    }

    /// Deletes the item.
    public enum Delete: DBusMethod {
        public static let interface = ItemInterface.name
        public static let name = "Delete"
        public typealias Input = NoArguments

        public struct Output: DBusArguments {
            public var prompt: ObjectPath
            public init(prompt: ObjectPath) { self.prompt = prompt }
            public static var argumentDescriptions: [ArgumentDescription] { [.init("Prompt", ObjectPath.self)] }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { prompt = try d.next() }
            public var argumentValues: [DBusValue] { [prompt.dbusValue] }
        }
    }

    /// The item's secret, encoded for `session`.
    public enum GetSecret: DBusMethod {
        public static let interface = ItemInterface.name
        public static let name = "GetSecret"

        public struct Input: DBusArguments {
            public var session: ObjectPath
            public init(session: ObjectPath) { self.session = session }
            public static var argumentDescriptions: [ArgumentDescription] { [.init("session", ObjectPath.self)] }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { session = try d.next() }
            public var argumentValues: [DBusValue] { [session.dbusValue] }
        }

        public typealias Output = SecretArgument
    }

    /// Replaces the item's secret.
    public enum SetSecret: DBusMethod {
        public static let interface = ItemInterface.name
        public static let name = "SetSecret"
        public typealias Input = SecretArgument
        public typealias Output = NoArguments
    }
}
