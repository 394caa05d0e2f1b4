import DBusKit
import SecretServiceProtocol

/// A transfer session: org.freedesktop.Secret.Session. Only the client that opened it may
/// close it.
struct SessionObject: DBusObject {
    let server: SecretServer
    let number: UInt64
    let session: TransferSession

    var interfaces: [InterfaceDescription] { [SessionInterface.description] }

    static let methods = MethodTable<SessionObject>()
        .on(SessionInterface.Close.self) { object, _, call in
            guard call.sender == object.session.owner else {
                throw DBusError.unknownMethod("this session belongs to another client")
            }
            object.server.closeSession(object.number)
            return NoArguments()
        }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        try Self.methods.handle(call, on: self)
    }
}
