/// State owned by a connection's loop thread, in a box that checks every access: in debug
/// builds (the tests) reading or changing it on another thread while the loop runs traps,
/// instead of racing. Before the loop runs, or after it stopped, any one thread may use it
/// (setting up, tearing down). Work on other threads reaches it by posting to the loop, the
/// box carrying it into their `@Sendable` closures:
///
/// ```swift
/// let model = LoopOwned(self.model, on: call.connection)
/// DispatchQueue.global().async {
///     let key = slowKeyDerivation(password)        // Sendable inputs only
///     call.connection.post { model.value.unlock(with: key); call.reply([]) }
/// }
/// ```
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

extension DBusConnection {
    /// True on the thread currently inside `run()`.
    public var isOnLoopThread: Bool { loop.isOnLoopThread }

    /// The longest the loop has spent on one message (its handler, until it replied or
    /// deferred), one piece of posted work or one follow-up: how long another client's call
    /// may have waited behind it.
    public var longestDispatch: Duration { .nanoseconds(loop.longestDispatch.load(ordering: .relaxed)) }
}
