import DBusKit

/// A transfer session: org.freedesktop.Secret.Session. Only the client that opened it may
/// close it.
struct SessionObject: DBusObject {
    let server: SecretServer
    let number: UInt64
    let session: TransferSession

    var interfaces: [InterfaceDescription] { [SecretInterface.sessionDescription] }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        guard call.sender == session.owner else {
            throw DBusError.unknownMethod("this session belongs to another client")
        }
        server.closeSession(number)
        return .empty
    }
}
