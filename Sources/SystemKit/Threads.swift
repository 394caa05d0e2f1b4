import CProcess
import Glibc

/// Threads of Coffer's own (a connection's event loop, a collection's writer), started with
/// pthreads so that the daemon needs no Foundation.
public enum Threads {
    /// Runs `body` on a new detached thread called `name` (Linux keeps its first 15 bytes, which
    /// `top -H` and `/proc/PID/task/*/comm` show). The process cannot go on without the thread,
    /// so failing to start one (the system's thread limit) stops it, as Foundation's `Thread` does.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let code = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            _ = cprocess_name_this_thread(start.name)
            start.body()
            return nil
        }, context)
        guard code == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            preconditionFailure("cannot start the thread '\(name)': \(Errno(code, operation: "pthread_create"))")
        }
    }

    /// What a new thread runs, handed over through pthread_create's argument.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
