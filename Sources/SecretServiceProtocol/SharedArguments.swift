import DBusKit

// Argument lists that several methods share, names included.

/// `attributes a{ss}`: the attributes to search for.
public struct AttributesArgument: DBusArguments {
    public var attributes: [String: String]
    public init(attributes: [String: String]) { self.attributes = attributes }
    public static var argumentDescriptions: [ArgumentDescription] { [.init("attributes", [String: String].self)] }
    public init(decoding d: inout ArgumentDecoder) throws(DBusError) { attributes = try d.next() }
    public var argumentValues: [DBusValue] { [attributes.dbusValue] }
}

/// `objects ao`: collections or items to lock or unlock.
public struct ObjectsArgument: DBusArguments {
    public var objects: [ObjectPath]
    public init(objects: [ObjectPath]) { self.objects = objects }
    public static var argumentDescriptions: [ArgumentDescription] { [.init("objects", [ObjectPath].self)] }
    public init(decoding d: inout ArgumentDecoder) throws(DBusError) { objects = try d.next() }
    public var argumentValues: [DBusValue] { [objects.dbusValue] }
}

/// `collection o`: a collection (`/` for none).
public struct CollectionArgument: DBusArguments {
    public var collection: ObjectPath
    public init(collection: ObjectPath) { self.collection = collection }
    public static var argumentDescriptions: [ArgumentDescription] { [.init("collection", ObjectPath.self)] }
    public init(decoding d: inout ArgumentDecoder) throws(DBusError) { collection = try d.next() }
    public var argumentValues: [DBusValue] { [collection.dbusValue] }
}

/// `prompt o`: the prompt to run to finish the operation (`/` when none is needed).
public struct PromptArgument: DBusArguments {
    public var prompt: ObjectPath
    public init(prompt: ObjectPath) { self.prompt = prompt }
    public static var argumentDescriptions: [ArgumentDescription] { [.init("prompt", ObjectPath.self)] }
    public init(decoding d: inout ArgumentDecoder) throws(DBusError) { prompt = try d.next() }
    public var argumentValues: [DBusValue] { [prompt.dbusValue] }
}

/// `secret (oayays)`: one secret.
public struct SecretArgument: DBusArguments {
    public var secret: WireSecret
    public init(secret: WireSecret) { self.secret = secret }
    public static var argumentDescriptions: [ArgumentDescription] { [.init("secret", WireSecret.self)] }
    public init(decoding d: inout ArgumentDecoder) throws(DBusError) { secret = try d.next() }
    public var argumentValues: [DBusValue] { [secret.dbusValue] }
}
