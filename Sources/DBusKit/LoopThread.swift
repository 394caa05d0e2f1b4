import Dispatch
internal import SystemKit

/// Runs a connection's event loop on a background thread until `stop()`.
public final class LoopThread: Sendable {
    public let connection: DBusConnection
    private let finished = DispatchSemaphore(value: 0)

    public init(_ connection: DBusConnection) {
        self.connection = connection
        Threads.start(name: "D-Bus loop") { [connection, finished] in
            connection.run()
            finished.signal()
        }
    }

    /// Stops the loop and waits (at most 10 s) for the thread to leave `run()`; returns whether it did.
    @discardableResult
    public func stop() -> Bool {
        connection.stop()
        return finished.wait(timeout: .now() + 10) == .success
    }
}
