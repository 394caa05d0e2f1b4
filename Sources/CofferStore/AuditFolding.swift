import CofferCore

/// Refusals folded together, so that no program can rotate the record of what it did out of
/// the audit log by being refused in a loop: the first refusal of an application (an action on
/// a collection) in an interval is written as it is; the ones like it that follow within the
/// interval are only counted, and written as one line with the count (`AuditEvent.repeated`)
/// when the interval is over. Every unverified process counts as one application here (it
/// names itself, so a new name must not buy new lines).
struct AuditFolding {
    /// What refusals are alike.
    struct Key: Hashable {
        let application: Application?
        let action: AuditEvent.Action
        let collection: CollectionID?

        init(_ event: AuditEvent) {
            application = event.application.map { $0.isVerified ? $0 : .unverified(commandName: "*") }
            action = event.action
            collection = event.collection
        }
    }

    /// One interval of one key's refusals: when it began, and what came since the first.
    private struct Window {
        let start: UInt64
        var count: UInt64 = 0
        var last: AuditEvent
    }

    /// How long an interval lasts, in seconds.
    let interval: UInt64
    private var windows: [Key: Window] = [:]

    init(interval: UInt64) {
        self.interval = interval
    }

    /// When the first interval with refusals counted is over (nil: none is).
    var nextSummary: UInt64? { windows.values.filter { $0.count > 0 }.map { $0.start + interval }.min() }

    /// The lines to write for `events` (in order), and the summaries of intervals over by the
    /// time of each: a refusal within its key's interval is only counted.
    mutating func fold(_ events: [AuditEvent]) -> [AuditEvent] {
        var out: [AuditEvent] = []
        for event in events {
            out += flush(before: event.time)
            guard event.outcome == .denied else {
                out.append(event)
                continue
            }
            let key = Key(event)
            if var window = windows[key] {
                window.count += 1
                window.last = event
                windows[key] = window
            } else {
                windows[key] = Window(start: event.time, last: event)
                out.append(event)
            }
        }
        return out
    }

    /// The summaries of the intervals over by `now` (all of them when nil), which are closed.
    mutating func flush(before now: UInt64?) -> [AuditEvent] {
        var out: [AuditEvent] = []
        for (key, window) in windows where now.map({ $0 >= window.start + interval }) ?? true {
            windows[key] = nil
            guard window.count > 0 else { continue }
            var summary = window.last
            summary.item = nil
            summary.label = nil
            summary.sealedLabel = nil
            summary.detail = "\(window.count) more refused like the line with this application, action and collection before, "
                + "within \(interval) s"
            summary.repeated = window.count
            out.append(summary)
        }
        return out.sorted { $0.time < $1.time }
    }
}
