internal import CDBus
internal import SystemKit

extension EventLoop {
    /// Waits in `poll` for the connection's watches, the wake-up pipe, the next timeout or
    /// follow-up deadline (not at all when `immediate`), then handles what is ready.
    func pollOnce(immediate: Bool) {
        let (watches, timeouts) = io.withLock { ($0.watches, $0.timeouts) }
        var descriptors: [(FileDescriptor, PollEvents)] = [(wakeFD, .readable)]
        var polled: [OpaquePointer] = []
        for w in watches where dbus_watch_get_enabled(w) != 0 {
            let flags = dbus_watch_get_flags(w)
            var events: PollEvents = []
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
            descriptors.append((FileDescriptor(rawValue: dbus_watch_get_unix_fd(w)), events))
            polled.append(w)
        }
        let now = EventLoop.now()
        var wait: Int32 = -1
        for (t, entry) in timeouts where dbus_timeout_get_enabled(t) != 0 {
            let remaining = entry.deadline > now ? Int32(clamping: entry.deadline - now) : 0
            wait = wait < 0 ? remaining : min(wait, remaining)
        }
        if let limit = shared.withLock({ $0.followUps.pollLimit(now: EventLoop.nanoseconds()) }) {
            wait = wait < 0 ? limit : min(wait, limit)
        }
        if immediate { wait = 0 }

        guard let ready = try? FileDescriptor.poll(descriptors, timeoutMilliseconds: wait) else { return }

        if !ready[0].isEmpty {
            while let drained = try? wakeFD.read(upTo: 256), !drained.isEmpty {}
        }
        for (index, w) in polled.enumerated() {
            let revents = ready[index + 1]
            guard !revents.isEmpty else { continue }
            // An earlier handle may have removed (and freed) this watch.
            guard io.withLock({ $0.watches.contains(w) }), dbus_watch_get_enabled(w) != 0 else { continue }
            var flags: UInt32 = 0
            if revents.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
            if revents.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
            if !revents.isDisjoint(with: [.error, .invalid]) { flags |= DBUS_WATCH_ERROR.rawValue }
            if revents.contains(.hangUp) { flags |= DBUS_WATCH_HANGUP.rawValue }
            if flags != 0 { _ = dbus_watch_handle(w, flags) }
        }
        let after = EventLoop.now()
        let expired = io.withLock { state -> [OpaquePointer] in
            state.timeouts.compactMap { $0.value.deadline <= after ? $0.key : nil }
        }
        for t in expired {
            guard io.withLock({ $0.timeouts[t] != nil }), dbus_timeout_get_enabled(t) != 0 else { continue }
            let interval = UInt64(max(0, dbus_timeout_get_interval(t)))
            io.withLock { $0.timeouts[t]?.deadline = after + interval }
            _ = dbus_timeout_handle(t)
        }
    }
}
