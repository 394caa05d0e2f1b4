/// A named, typed argument of a method or signal (the name only shows in introspection).
public struct ArgumentDescription: Sendable, Hashable {
    public var name: String
    /// A single complete type.
    public var type: Signature
    /// Set for an argument that carries a secret: its byte arrays are read straight into secure
    /// memory (`DBusValue.secureBytes`), and one longer than this many bytes is refused before
    /// anything is copied.
    public var secretLimit: Int?

    public init(_ name: String, _ type: Signature, secretLimit: Int? = nil) {
        precondition(type.isSingleCompleteType, "argument '\(name)' type '\(type)' must be one complete type")
        self.name = name
        self.type = type
        self.secretLimit = secretLimit
    }

    /// An argument of the Swift type `type` (its D-Bus type and secret limit come from it).
    public init<T: DBusRepresentable>(_ name: String, _ type: T.Type) {
        self.init(name, T.dbusType, secretLimit: T.secretLimit)
    }
}

/// A method: name plus in and out arguments. The object server checks every incoming call's
/// signature against `inSignature` before your handler runs.
public struct MethodDescription: Sendable, Hashable {
    public var name: String
    public var inArguments: [ArgumentDescription]
    public var outArguments: [ArgumentDescription]

    public init(_ name: String, in inArguments: [ArgumentDescription] = [], out outArguments: [ArgumentDescription] = []) {
        precondition(DBusNames.isValidMemberName(name), "invalid method name '\(name)'")
        self.name = name
        self.inArguments = inArguments
        self.outArguments = outArguments
    }

    /// Concatenated in-argument types, e.g. `a{sv}(oayays)b`.
    public var inSignature: String { inArguments.map(\.type.rawValue).joined() }
    /// Concatenated out-argument types.
    public var outSignature: String { outArguments.map(\.type.rawValue).joined() }
    /// Per in-argument: the secret limit to decode it with (see `ArgumentDescription.secretLimit`).
    public var inSecretLimits: [Int?] { inArguments.map(\.secretLimit) }
}

/// Who may read or write a property.
public enum PropertyAccess: Sendable, Hashable {
    case read, write, readWrite

    public var isReadable: Bool { self != .write }
    public var isWritable: Bool { self != .read }

    var introspectionValue: String {
        switch self {
        case .read: return "read"
        case .write: return "write"
        case .readWrite: return "readwrite"
        }
    }
}

/// A property: name, type (one complete type) and access.
public struct PropertyDescription: Sendable, Hashable {
    public var name: String
    public var type: Signature
    public var access: PropertyAccess

    public init(_ name: String, _ type: Signature, access: PropertyAccess = .read) {
        precondition(DBusNames.isValidMemberName(name), "invalid property name '\(name)'")
        precondition(type.isSingleCompleteType, "property '\(name)' type '\(type)' must be one complete type")
        self.name = name
        self.type = type
        self.access = access
    }
}

/// A signal (for introspection; emit it with `DBusConnection.emitSignal`).
public struct SignalDescription: Sendable, Hashable {
    public var name: String
    public var arguments: [ArgumentDescription]

    public init(_ name: String, _ arguments: [ArgumentDescription] = []) {
        precondition(DBusNames.isValidMemberName(name), "invalid signal name '\(name)'")
        self.name = name
        self.arguments = arguments
    }
}

/// The description of one interface an object implements. Build these once (as `static let`)
/// and return them from `DBusObject.interfaces`; the object server uses them for dispatch,
/// signature checks, property access checks and introspection.
public struct InterfaceDescription: Sendable, Hashable {
    public var name: String
    public var methods: [MethodDescription]
    public var properties: [PropertyDescription]
    public var signals: [SignalDescription]

    public init(_ name: String, methods: [MethodDescription] = [], properties: [PropertyDescription] = [],
                signals: [SignalDescription] = []) {
        precondition(DBusNames.isValidInterfaceName(name), "invalid interface name '\(name)'")
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    public func method(named name: String) -> MethodDescription? { methods.first { $0.name == name } }
    public func property(named name: String) -> PropertyDescription? { properties.first { $0.name == name } }
}
