import Synchronization

/// A follow-up (`DBusConnection.postFollowUp`) reserved before the work it follows is handed
/// to another thread, and posted from there once that work is done: for a reply sent from a
/// worker thread. While it is reserved the loop looks at its follow-ups at least once per
/// follow-up delay, so posting it needs no wake-up of the loop; a wake-up then would have
/// the loop compete for a CPU with the reply the follow-up comes with.
///
/// Post it at most once: a second `post` traps. A slot let go of without being posted gives its
/// reservation up. A stopping loop waits for the reserved follow-ups (a write under way's).
public final class FollowUpSlot: Sendable {
    private let loop: EventLoop
    private let isOpen = Atomic(true)

    init(loop: EventLoop) {
        loop.reserveFollowUp()
        self.loop = loop
    }

    /// Posts `work` as the reserved follow-up; from any thread.
    public func post(_ work: @escaping @Sendable () -> Void) {
        precondition(isOpen.exchange(false, ordering: .acquiringAndReleasing), "a follow-up slot is posted once")
        loop.postFollowUp(work, reserved: true)
    }

    deinit {
        if isOpen.load(ordering: .acquiring) { loop.cancelFollowUpReservation() }
    }
}
