import CofferCore
import DBusKit
import SystemKit

extension AccessGate {
    /// Writes `event` to the audit log once the call at hand is answered: the write is not on
    /// the client's path, and lines keep the order they were recorded in.
    func record(_ event: AuditEvent) {
        guard let audit else { return }
        server.connection.post { audit.record(event) }
    }

    /// The audit events of one decision, each item once however often it was asked for, in one
    /// write once the call is answered (the events are made then too, so that the client does
    /// not wait for them): every read decided, and every refusal (a change allowed is recorded
    /// by the write itself). `details`: why each item allowed was (nil for the others).
    func record(_ request: AccessRequest, _ references: [ItemReference], _ result: Authorization, decisions: [ItemDecision],
                details: [String?]) {
        guard let audit else { return }
        let time = Clock.now()
        server.connection.post {
            var events: [AuditEvent] = []
            var seen = Set<ItemReference>(minimumCapacity: references.count)
            events.reserveCapacity(references.count)
            for (position, reference) in references.enumerated() where seen.insert(reference).inserted {
                let (outcome, detail): (AuditEvent.Outcome, String?) = switch result.verdicts[position] {
                case .refused(let why): (.denied, why)
                case .allowed: (.ok, request.action == .read ? details[position] : nil)
                case .locked, .missing: (.ok, nil)
                }
                guard let detail else { continue }
                events.append(AuditEvent(time: time, action: request.auditAction, outcome: outcome, application: result.application,
                                         collection: reference.collection, item: reference.item,
                                         label: decisions[position].label, detail: detail))
            }
            audit.record(contentsOf: events)
        }
    }

    /// What would let `application` do `action` to the items of `collection`: a grant (unless
    /// it is unverified, which no grant can name), or the open policy.
    static func howToAllow(_ action: AccessAction, to application: Application, in collection: CollectionID) -> String {
        let policy = "coffer policy open --collection \(collection)"
        guard application.isVerified else { return "to let every application \(action.rawValue) '\(collection)': \(policy)" }
        return "to allow it: coffer access grant \(ShellQuoting.quoted(application.encoded))\(Self.grantOption(action)) --collection \(collection)"
            + " (or every application: \(policy))"
    }

    /// The error a client gets for a request it may not make: who, what, why, and what would
    /// allow it (a grant, or the collection's policy). `others`: how many more items, asked
    /// for in the same call, were refused too.
    static func refusal(_ request: AccessRequest = .read, of reference: ItemReference, to application: Application?,
                        because why: String, others: Int = 0) -> DBusError {
        let policy = "coffer policy open --collection \(reference.collection)"
        let what = "\(request.verb) item \(reference)" + (others > 0 ? " (and \(others) more asked for with it)" : "")
        guard let application else {
            return .accessDenied("Access denied: it may not \(what): \(why). To let every application do so: \(policy)")
        }
        if why == ApplicationKey.refusal { return .accessDenied("Access denied: \(application) may not \(what): \(why).") }
        guard application.isVerified else {
            return .accessDenied("Access denied: \(application) may not \(what): \(why). "
                + "No grant can name a process the service cannot verify; to let every application do so: \(policy)")
        }
        return .accessDenied("Access denied: \(application) may not \(what): \(why). "
            + "To allow it: coffer access grant \(ShellQuoting.quoted(application.encoded))\(grantOption(request.action))"
            + " --collection \(reference.collection)" + (others > 0 ? "" : " --item \(reference.item)") + " (or every application: \(policy))")
    }

    /// The `coffer access grant` option for `action` (a read grant is the default).
    private static func grantOption(_ action: AccessAction) -> String {
        action == .read ? "" : " --change"
    }
}
