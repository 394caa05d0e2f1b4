internal import CDBus
import Dispatch
import Synchronization

/// A connection to a message bus, with its own single-threaded event loop.
///
/// ## Threads
/// The connection is driven by one thread at a time. While `run()` is executing, that thread is
/// the *loop thread*: message handlers, signal handlers, name-vanished callbacks, async-call
/// completions and `post`ed work all run there, one at a time. Every public method may be
/// called from any thread: when called from another thread while the loop runs, the work is
/// forwarded to the loop thread (blocking methods wait for it). When no loop is running, methods
/// do their work on the calling thread (a simple client never needs to call `run()`).
///
/// A blocking `call` made *on* the loop thread blocks the whole loop until the reply arrives;
/// use `callAsync` there for anything slow.
///
/// The connection never exits the process on disconnect; `run()` then returns and
/// `isConnected` becomes false.
public final class DBusConnection: @unchecked Sendable {   // libdbus connections are thread-safe (dbus_threads_init_default); the rest is Mutexes
    let raw: OpaquePointer
    let loop: EventLoop
    let dispatcher = Dispatcher()
    private let ownerTrackingEnabled = Mutex(false)
    private let uidCache = Mutex([String: UInt32]())
    private let serverStorage = Mutex<ObjectServer?>(nil)

    /// This connection's unique name on the bus (e.g. `:1.42`).
    public let uniqueName: String

    /// Default timeout for blocking and async calls.
    public static let defaultTimeout: Duration = .seconds(25)

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`) with a private connection.
    public static func sessionBus() throws(DBusError) -> DBusConnection {
        let raw = try withCError(fallback: .failed("cannot connect to the session bus")) {
            dbus_bus_get_private(DBUS_BUS_SESSION, $0)
        }
        return DBusConnection(registered: raw)
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket) with a
    /// private connection.
    public static func systemBus() throws(DBusError) -> DBusConnection {
        let raw = try withCError(fallback: .failed("cannot connect to the system bus")) {
            dbus_bus_get_private(DBUS_BUS_SYSTEM, $0)
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        return DBusConnection(registered: raw)
    }

    /// Connects to the bus at `address` (e.g. `unix:path=/tmp/x`) and registers with it (Hello).
    public convenience init(address: String) throws(DBusError) {
        if address.utf8.contains(0) { throw .invalidArgs("address contains NUL") }
        let raw = try withCError(fallback: .failed("cannot connect to \(address)")) { err in
            address.withCString { dbus_connection_open_private($0, err) }
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        do {
            _ = try withCError(fallback: .failed("bus registration failed")) { err -> Bool? in
                dbus_bus_register(raw, err) != 0 ? true : nil
            }
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
        self.init(registered: raw)
    }

    private init(registered raw: OpaquePointer) {
        self.raw = raw
        loop = EventLoop(driving: raw)
        dbus_connection_set_exit_on_disconnect(raw, 0)
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        loop.attach()
        dispatcher.connection = self
        let data = Unmanaged.passUnretained(dispatcher).toOpaque()
        let ok = dbus_connection_add_filter(raw, dispatcherFilter, data, nil)
        precondition(ok != 0, "libdbus: out of memory")
    }

    deinit {
        let data = Unmanaged.passUnretained(dispatcher).toOpaque()
        dbus_connection_remove_filter(raw, dispatcherFilter, data)
        loop.detach()
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { dbus_connection_get_is_connected(raw) != 0 }

    /// Whether messages on this connection may carry Unix file descriptors (`h`): a Unix
    /// socket whose peer agreed to it when the connection was set up.
    public var canPassFileDescriptors: Bool { dbus_connection_can_send_type(raw, cdbus_type_unix_fd) != 0 }

    /// `NotSupported` for a message with file descriptors on a connection that cannot pass
    /// them (libdbus would refuse it without saying why).
    func requireCanSend(_ message: DBusMessage) throws(DBusError) {
        if message.containsFileDescriptors && !canPassFileDescriptors {
            throw .notSupported("this connection cannot pass file descriptors (it is not a Unix socket, or the other side did not agree to it)")
        }
    }

    /// Closes the connection (the bus then announces this peer's unique name as gone). A
    /// running loop returns from `run()`. Further calls fail with `Disconnected`; idempotent.
    public func close() {
        onLoopThread { [self] in dbus_connection_close(raw) }
    }

    // MARK: Event loop

    /// Runs the event loop on the calling thread until `stop()` is called or the connection is
    /// lost. Must not be called while a loop is already running. A `stop()` issued before
    /// `run()` makes it return at once.
    public func run() { loop.run() }

    /// Asks the loop to return from `run()`; thread-safe.
    public func stop() { loop.stop() }

    /// Runs `work` on the loop thread as soon as possible; thread-safe. If no loop is running,
    /// the work waits until `run()` starts. Use it to finish work started on other threads
    /// (e.g. deferred replies after a slow key derivation). Posted by the loop thread while
    /// follow-ups wait (`postFollowUp`), it runs after them.
    public func post(_ work: @escaping @Sendable () -> Void) { loop.post(work) }

    /// Runs `work` on the loop thread once the loop has dispatched the next message (whichever
    /// it is), or about a millisecond from now if none comes; thread-safe. For what follows a
    /// reply (its signals, its log lines): the caller's next call, which usually comes within
    /// that time, is then dispatched first, and the follow-up runs while that call waits on
    /// something else (such as a disk flush) instead of competing with it for the CPU.
    ///
    /// Follow-ups run in the order queued, each followed by what it posts. While one waits,
    /// the work the loop thread posts (`post`) and the signals it emits wait behind it; replies
    /// the loop sends meanwhile, and work other threads post, do not.
    public func postFollowUp(_ work: @escaping @Sendable () -> Void) { loop.postFollowUp(work) }

    /// Reserves a follow-up for work another thread finishes, to be posted from there with the
    /// slot's `post` (see `FollowUpSlot`); thread-safe.
    public func reserveFollowUp() -> FollowUpSlot { FollowUpSlot(loop: loop) }

    /// Runs `body` where it may touch the connection: directly if the caller is the loop thread
    /// or no loop is running, otherwise on the loop thread while the caller waits.
    func onLoopThread(_ body: @escaping @Sendable () -> Void) {
        guard loop.runsOnAnotherThread else { return body() }
        let done = DispatchSemaphore(value: 0)
        if loop.postIfRunning({ body(); done.signal() }) {
            done.wait()
            return
        }
        body()   // the loop stopped meanwhile: the caller may drive the connection
    }

    // MARK: Sending

    /// Sends `message` without waiting for a reply. Returns the serial it was sent with.
    ///
    /// From any thread: libdbus queues it under its own lock and writes what the socket takes at
    /// once. Whatever the socket did not take is left to a running loop (libdbus wakes it
    /// through the wake-up function the loop installed); with no loop running, it is flushed here.
    @discardableResult
    public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
        try requireCanSend(message)
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else {
            throw .failed("libdbus: out of memory while sending")
        }
        message.markLocked()
        if !loop.runsOnAnotherThread && !loop.isOnLoopThread { dbus_connection_flush(raw) }
        return serial
    }

    /// Sends a method call and waits for its reply. An error reply, a timeout (`NoReply`) or a
    /// lost connection is thrown as `DBusError`.
    public func call(_ message: DBusMessage, timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> DBusMessage {
        guard message.kind == .methodCall else { throw .invalidArgs("call() needs a method call message") }
        try requireCanSend(message)
        if loop.runsOnAnotherThread {
            // Let the loop thread do the I/O; wait here for the completion.
            let answer = Mutex<Result<DBusMessage, DBusError>?>(nil)
            let semaphore = DispatchSemaphore(value: 0)
            // The loop does not stop before this call is answered (its own timeout included).
            let queued = loop.postAwaitedCallIfRunning { [self, loop] in
                PendingCall.start(connection: self, message: message, timeout: timeout) { result in
                    answer.withLock { $0 = result }
                    loop.callAnswered()
                    semaphore.signal()
                }
            }
            if queued {
                semaphore.wait()
                return try answer.withLock { $0 }!.get()
            }
        }
        let reply = try withCError(fallback: .noReply("no reply")) { err in
            dbus_connection_send_with_reply_and_block(raw, message.raw, timeout.milliseconds, err)
        }
        message.markLocked()
        return DBusMessage(adopting: reply, locked: true)
    }

    /// Convenience: builds a method call, waits for the reply and returns its arguments.
    public func call(destination: String?, path: ObjectPath, interface: String?, member: String,
                     arguments: [DBusValue] = [],
                     timeout: Duration = DBusConnection.defaultTimeout) throws(DBusError) -> [DBusValue] {
        let message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface,
                                                 member: member, arguments: arguments)
        return try call(message, timeout: timeout).arguments()
    }

    /// Sends a method call and calls `completion` on the loop thread with the reply (or the
    /// error: error reply, `NoReply` on timeout, `Disconnected`). Needs a running loop to complete.
    public func callAsync(_ message: DBusMessage, timeout: Duration = DBusConnection.defaultTimeout,
                          completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        if loop.runsOnAnotherThread {
            post { [self] in PendingCall.start(connection: self, message: message, timeout: timeout, completion: completion) }
        } else {
            PendingCall.start(connection: self, message: message, timeout: timeout, completion: completion)
        }
    }

    // MARK: Object server

    /// The object server of this connection (created on first use). See `ObjectServer`.
    public var objectServer: ObjectServer {
        serverStorage.withLock { server in
            if let server { return server }
            let created = ObjectServer(connection: self)
            server = created
            dispatcher.objectServer = created
            return created
        }
    }

    // MARK: Bus bookkeeping used by extensions

    func cachedUID(_ name: String) -> UInt32? { uidCache.withLock { $0[name] } }
    func cacheUID(_ name: String, _ uid: UInt32) { uidCache.withLock { $0[name] = uid } }
    func forgetUID(_ name: String) { uidCache.withLock { _ = $0.removeValue(forKey: name) } }

    /// Subscribes once to NameOwnerChanged for names losing their owner.
    func enableOwnerTracking() throws(DBusError) {
        let already = ownerTrackingEnabled.withLock { enabled -> Bool in
            defer { enabled = true }
            return enabled
        }
        guard !already else { return }
        do {
            try addMatch("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''")
        } catch {
            ownerTrackingEnabled.withLock { $0 = false }
            throw error
        }
    }
}

/// The libdbus filter: hands every incoming message to the connection's `Dispatcher`.
private let dispatcherFilter: DBusHandleMessageFunction = { _, message, data in
    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(data!).takeUnretainedValue()
    return dispatcher.handle(message!) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

extension Duration {
    /// Whole milliseconds, clamped to 0...Int32.max (libdbus aborts on negative timeouts).
    var milliseconds: Int32 {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow { return seconds < 0 ? 0 : Int32.max }
        return Int32(clamping: max(0, ms.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
