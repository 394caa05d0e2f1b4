/// The arguments of a method call, or the values of its reply, as one typed Swift value.
///
/// Declare the arguments once, in `argumentDescriptions` (names for introspection, types from
/// the Swift types), read them in order in `init(decoding:)` and give them back in the same
/// order in `argumentValues`. `DBusArgumentsTests` checks the three agree for every method the
/// project declares.
public protocol DBusArguments: Sendable {
    /// Name and type of each argument, in order.
    static var argumentDescriptions: [ArgumentDescription] { get }
    /// Reads the arguments in order from `decoder`.
    init(decoding decoder: inout ArgumentDecoder) throws(DBusError)
    /// The arguments as sent, in order.
    var argumentValues: [DBusValue] { get }
}

extension DBusArguments {
    /// The arguments decoded from a message body; `InvalidArgs` if the body has other types or
    /// another number of values.
    public init(values: [DBusValue]) throws(DBusError) {
        var decoder = ArgumentDecoder(values)
        try self.init(decoding: &decoder)
        try decoder.finish()
    }

    /// The body signature, e.g. `a{sv}(oayays)b`.
    public static var signature: String { argumentDescriptions.map(\.type.rawValue).joined() }
}

/// Reads a message body's values one typed argument at a time.
public struct ArgumentDecoder {
    private let values: [DBusValue]
    private var position = 0

    public init(_ values: [DBusValue]) { self.values = values }

    /// The next argument as a `T`; `InvalidArgs` if there is none or it has another type.
    public mutating func next<T: DBusRepresentable>(_ type: T.Type = T.self) throws(DBusError) -> T {
        guard position < values.count else {
            throw .invalidArgs("expected an argument of type '\(T.dbusType)' at position \(position + 1), got none")
        }
        defer { position += 1 }
        return try T(dbusValue: values[position])
    }

    /// `InvalidArgs` if values are left over.
    func finish() throws(DBusError) {
        guard position == values.count else {
            throw .invalidArgs("expected \(position) arguments, got \(values.count)")
        }
    }
}

/// No arguments (or an empty reply).
public struct NoArguments: DBusArguments, Hashable {
    public init() {}
    public static var argumentDescriptions: [ArgumentDescription] { [] }
    public init(decoding decoder: inout ArgumentDecoder) throws(DBusError) {}
    public var argumentValues: [DBusValue] { [] }
}

/// A method of an interface, with its typed arguments and reply: declared once, used by the
/// object that serves it (`MethodTable`) and by clients that call it.
public protocol DBusMethod {
    associatedtype Input: DBusArguments
    associatedtype Output: DBusArguments
    /// The interface name, e.g. `org.freedesktop.Secret.Service`.
    static var interface: String { get }
    /// The member name, e.g. `OpenSession`.
    static var name: String { get }
}

extension DBusMethod {
    /// The description the object server checks calls against and introspection shows.
    public static var description: MethodDescription {
        MethodDescription(name, in: Input.argumentDescriptions, out: Output.argumentDescriptions)
    }
}

extension MethodCall {
    /// Sends a typed reply (see `reply(_:)`).
    public func reply<Output: DBusArguments>(_ output: Output) {
        reply(output.argumentValues)
    }
}

extension DBusConnection {
    /// Calls `M` on `path` of `destination` with `input` and waits for its typed reply. Byte
    /// arrays in reply arguments that carry secrets go straight to secure memory, refused past
    /// `replySecretLimit` bytes each (default: the limit each argument's type declares).
    public func call<M: DBusMethod>(_ method: M.Type, destination: String?, path: ObjectPath, _ input: M.Input,
                                    replySecretLimit: Int? = nil,
                                    timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> M.Output {
        let message = try DBusMessage.methodCall(destination: destination, path: path, interface: M.interface,
                                                 member: M.name, arguments: input.argumentValues)
        let limits = M.Output.argumentDescriptions.map { $0.secretLimit.map { replySecretLimit ?? $0 } }
        return try M.Output(values: try call(message, timeout: timeout).arguments(secretLimits: limits))
    }
}
