/// The typed handlers of one kind of object, built once (as a `static let`) and used by its
/// `DBusObject.handleMethod`: each handler gets its method's decoded `Input` and returns its
/// `Output`, so no handler ever picks arguments out of a list by position.
///
/// ```swift
/// static let methods = MethodTable<ServiceObject>()
///     .on(Service.OpenSession.self) { object, input, call in try object.openSession(input, call) }
/// func handleMethod(_ call: MethodCall) throws -> MethodResult { try Self.methods.handle(call, on: self) }
/// ```
public struct MethodTable<Object>: Sendable {
    /// Runs one method for an object: decodes, calls the handler, encodes.
    private typealias Run = @Sendable (Object, MethodCall) throws -> MethodResult
    private var handlers: [String: Run] = [:]

    public init() {}

    private static func key(_ interface: String, _ member: String) -> String { interface + "\u{0}" + member }

    /// Adds a handler that answers at once.
    public func on<M: DBusMethod>(_ method: M.Type,
                                  _ handler: @escaping @Sendable (Object, M.Input, MethodCall) throws -> M.Output) -> Self {
        adding(M.self) { object, input, call in .reply(try handler(object, input, call).argumentValues) }
    }

    /// Adds a handler that may answer later: it returns `.deferred` and replies through
    /// `call.reply(_:)` with an `M.Output`, or answers at once with `.reply`.
    public func deferring<M: DBusMethod>(_ method: M.Type,
                                         _ handler: @escaping @Sendable (Object, M.Input, MethodCall) throws -> MethodResult) -> Self {
        adding(M.self, handler)
    }

    private func adding<M: DBusMethod>(_ method: M.Type,
                                       _ run: @escaping @Sendable (Object, M.Input, MethodCall) throws -> MethodResult) -> Self {
        var copy = self
        copy.handlers[Self.key(M.interface, M.name)] = { object, call in
            try run(object, try M.Input(values: call.arguments), call)
        }
        return copy
    }

    /// Whether a handler for `interface`.`member` is registered.
    public func handles(_ interface: String, _ member: String) -> Bool {
        handlers[Self.key(interface, member)] != nil
    }

    /// Runs the handler of `call`'s method on `object`; `UnknownMethod` if there is none.
    public func handle(_ call: MethodCall, on object: Object) throws -> MethodResult {
        guard let run = handlers[Self.key(call.interface, call.member)] else {
            throw DBusError.unknownMethod("no method \(call.interface).\(call.member)")
        }
        return try run(object, call)
    }
}
