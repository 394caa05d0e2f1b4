/// Carries a non-`Sendable` value (typically a model object owned by the loop thread) into
/// `@Sendable` closures such as the ones given to `post` or to worker threads, and checks at
/// run time that it is only used on the connection's loop thread (or while no loop runs).
///
/// ```swift
/// let model = LoopConfined(self.model, on: call.connection)
/// DispatchQueue.global().async {
///     let key = slowKeyDerivation(password)        // Sendable inputs only
///     call.connection.post { model.value.unlock(with: key); call.reply([]) }
/// }
/// ```
public struct LoopConfined<Value>: @unchecked Sendable {
    private let stored: Value
    private let connection: DBusConnection

    public init(_ value: Value, on connection: DBusConnection) {
        stored = value
        self.connection = connection
    }

    /// The value; traps when read on another thread while the loop runs.
    public var value: Value {
        precondition(!connection.loop.runsOnAnotherThread,
                     "LoopConfined value used off the D-Bus loop thread")
        return stored
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
