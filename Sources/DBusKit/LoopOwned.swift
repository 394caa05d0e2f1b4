/// Mutable state owned by a connection's loop thread, in a box that checks every access: in
/// debug builds (the tests) reading or changing it on another thread while the loop runs
/// traps, instead of racing. Before the loop runs, or after it stopped, any one thread may use it
/// (setting up, tearing down). Work on other threads reaches it by posting to the loop.
public final class LoopOwned<Value>: @unchecked Sendable {   // each access is checked to be on the loop thread
    private var stored: Value
    private let connection: DBusConnection

    public init(_ value: Value, on connection: DBusConnection) {
        stored = value
        self.connection = connection
    }

    /// The state; traps in debug builds when used on another thread while the loop runs.
    public var value: Value {
        get {
            assert(!connection.loop.runsOnAnotherThread, "loop-owned state read off the D-Bus loop thread")
            return stored
        }
        _modify {
            assert(!connection.loop.runsOnAnotherThread, "loop-owned state changed off the D-Bus loop thread")
            yield &stored
        }
    }
}
