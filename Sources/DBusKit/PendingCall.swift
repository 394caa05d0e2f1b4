internal import CDBus

/// Bridges libdbus's `DBusPendingCall` notification to a Swift completion (on the loop thread).
final class PendingCall {
    private let completion: (Result<DBusMessage, DBusError>) -> Void
    private let request: DBusMessage

    private init(request: DBusMessage, completion: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        self.request = request
        self.completion = completion
    }

    /// Sends `message` and arranges for `completion` to be called once. Must run on the thread
    /// driving the connection (the loop thread, or the only user when no loop runs).
    static func start(connection: DBusConnection, message: DBusMessage, timeout: Duration,
                      completion: @escaping (Result<DBusMessage, DBusError>) -> Void) {
        guard message.kind == .methodCall else {
            completion(.failure(.invalidArgs("callAsync() needs a method call message")))
            return
        }
        do {
            try connection.requireCanSend(message)
        } catch {
            completion(.failure(error))
            return
        }
        var pending: OpaquePointer? = nil
        guard dbus_connection_send_with_reply(connection.raw, message.raw, &pending, timeout.milliseconds) != 0 else {
            completion(.failure(.failed("libdbus: out of memory while sending")))
            return
        }
        message.markLocked()
        guard let pending else {
            completion(.failure(.disconnected("the connection is closed")))
            return
        }
        let box = PendingCall(request: message, completion: completion)
        let data = Unmanaged.passRetained(box).toOpaque()
        let ok = dbus_pending_call_set_notify(pending, { pending, data in
            let box = Unmanaged<PendingCall>.fromOpaque(data!).takeUnretainedValue()
            box.finish(pending!)
        }, data, { data in
            Unmanaged<PendingCall>.fromOpaque(data!).release()
        })
        if ok == 0 {
            Unmanaged<PendingCall>.fromOpaque(data).release()
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
            completion(.failure(.failed("libdbus: out of memory")))
            return
        }
        // Completed before the notify function was installed (possible only if another
        // thread read the reply): deliver now.
        if dbus_pending_call_get_completed(pending) != 0 {
            box.finish(pending)
        }
        dbus_pending_call_unref(pending)   // libdbus keeps its own reference until completion
    }

    private var finished = false

    private func finish(_ pending: OpaquePointer) {
        guard !finished else { return }
        finished = true
        guard let reply = dbus_pending_call_steal_reply(pending) else {
            completion(.failure(.noReply("no reply")))
            return
        }
        let message = DBusMessage(adopting: reply, locked: true)
        if message.kind == .error {
            completion(.failure(message.error ?? .failed("error reply")))
        } else {
            completion(.success(message))
        }
    }
}
