import CofferCore
import DBusKit
import Synchronization
import SystemKit

/// Decides whether the application behind a client may read the secrets it asks for, or change
/// (or delete) the items: allowed by the collection's policy, because it created the item, or
/// by a grant that covers it; else (policy `ask`) the user is asked — Allow once, Always allow
/// (remembered as a grant), or Deny — or (policy `strict`) refused. An application's key
/// (`ApplicationKey`) is refused to every caller. Every read decided, and every refusal, is
/// written to the audit log.
///
/// Runs on the loop thread; dialogs run one at a time on the prompts' dialog queue. So that no
/// program can flood the user with dialogs (also by opening many connections): an application
/// has at most `maxPendingPerApplication` dialogs waiting and all at most `maxPending`; what the
/// user denied an application stays denied, without asking, for `denialMemory` seconds (or
/// until a grant); a dialog whose client left the bus before its turn is not shown.
final class AccessGate: Sendable {
    unowned let server: SecretServer
    private let identifier: CallerIdentifier
    let consent: (any ConsentAsker)?
    let audit: (any AuditRecorder)?

    private struct Denial: Hashable {
        let application: Application
        let item: ItemReference
        let action: AccessAction
    }
    private struct State {
        /// What the user denied, until when (seconds since 1970).
        var denied: [Denial: UInt64] = [:]
        /// Consent dialogs asked for and not yet answered, per application.
        var pending: [Application: Int] = [:]
    }
    /// The loop thread's (checked).
    private let state: LoopOwned<State>
    private var denied: [Denial: UInt64] {
        get { state.value.denied }
        _modify { yield &state.value.denied }
    }
    private var pending: [Application: Int] {
        get { state.value.pending }
        _modify { yield &state.value.pending }
    }
    /// Clients that left the bus (read by the dialog thread before showing their dialog).
    let departed = Mutex<Set<String>>([])

    static let maxPendingPerApplication = 4
    static let maxPending = 32
    static let denialMemory: UInt64 = 600
    /// The most denials remembered; the oldest go first.
    static let maxDenials = 10_000

    init(server: SecretServer, identifier: CallerIdentifier, consent: (any ConsentAsker)?, audit: (any AuditRecorder)?) {
        self.server = server
        self.identifier = identifier
        self.consent = consent
        self.audit = audit
        state = LoopOwned(State(), on: server.connection)
    }

    /// The application behind `client`, or nil with a log line when it cannot be told.
    func application(of client: String, then: @escaping (Caller?) -> Void) {
        identifier.identify(client) { [server] result in
            switch result {
            case .success(let identified): then(identified)
            case .failure(let error):
                server.log("cannot tell which application \(client) is: \(error)")
                then(nil)
            }
        }
    }

    /// Drops what is known of a client that left the bus; its dialogs still waiting are not shown.
    func forget(_ client: String) {
        identifier.forget(client)
        if pending.values.contains(where: { $0 > 0 }) { departed.withLock { _ = $0.insert(client) } }
    }

    /// Who a dialog's limits and a denial count for: the application, or for an unverified
    /// process every unverified process at once (it names itself, so a new name must not buy a
    /// new dialog after a Deny, or room past the limit of waiting dialogs).
    static func asker(_ application: Application) -> Application {
        application.isVerified ? application : .unverified(commandName: "*")
    }

    private func isDenied(_ action: AccessAction, of reference: ItemReference, to application: Application, now: UInt64) -> Bool {
        guard let until = denied[Denial(application: application, item: reference, action: action)] else { return false }
        return now < until
    }

    private func remember(denials references: Set<ItemReference>, of action: AccessAction, to application: Application) {
        let now = Clock.now()
        if denied.count + references.count > Self.maxDenials {
            denied = denied.filter { $0.value > now }
            while denied.count + references.count > Self.maxDenials, let oldest = denied.min(by: { $0.value < $1.value }) {
                denied[oldest.key] = nil
            }
        }
        for reference in references {
            denied[Denial(application: application, item: reference, action: action)] = now + Self.denialMemory
        }
    }

    /// Closes the consent dialogs on screen (their reads are then refused).
    func closeDialogs() {
        consent?.closeDialogs()
    }

    // MARK: Deciding

    /// Decides `request` for each of `references` by `client`; calls `then` on the loop thread
    /// (at once when nobody needs to be asked). `digestRead`: the caller's executable digest
    /// was read already (or could not be).
    func authorize(_ request: AccessRequest, of references: [ItemReference], by client: String, digestRead: Bool = false,
                   then: @escaping @Sendable (Authorization) -> Void) {
        application(of: client) { [self] identified in
            guard let identified else {
                let refused = AccessVerdict.refused("the service cannot tell which application is asking (see its log)")
                let result = Authorization(verdicts: Array(repeating: refused, count: references.count))
                record(request, references, result, decisions: references.map { _ in .missing }, details: references.map { _ in nil })
                then(result)
                return
            }
            // A grant tied to one binary needs the caller's executable hashed: off the loop, once.
            var needsDigest = false
            let decisions = server.keychain.decide(request.action, of: references, by: identified.application, digest: {
                if digestRead || identified.knownExecutableDigest != nil { return identified.knownExecutableDigest }
                needsDigest = true
                return nil
            })
            if needsDigest {
                identifier.executableDigest(of: identified) { [self] _ in
                    authorize(request, of: references, by: client, digestRead: true, then: then)
                }
                return
            }
            let now = Clock.now()
            let application = Self.asker(identified.application)
            let toAsk = Array(Set(zip(references, decisions).compactMap { reference, decided in
                decided.decision == .ask && !isDenied(request.action, of: reference, to: application, now: now) ? reference : nil
            }))
            guard !toAsk.isEmpty else {
                then(conclude(request, references, decisions, as: identified, allowedOnce: []))
                return
            }
            guard let consent else {
                let collections = Set(toAsk.map(\.collection)).sorted()
                server.log("\(identified) was refused \(request.verb) of \(toAsk.count) item(s): no dialog can ask the user (no pinentry); "
                           + (identified.application.isVerified ? "" : "it is unverified (\(identified.unverifiedBecause ?? "")); ")
                           + collections.map { Self.howToAllow(request.action, to: identified.application, in: $0) }.joined(separator: "; "))
                then(conclude(request, references, decisions, as: identified, allowedOnce: []))
                return
            }
            guard pending[application, default: 0] < Self.maxPendingPerApplication,
                  pending.values.reduce(0, +) < Self.maxPending else {
                then(conclude(request, references, decisions, as: identified, allowedOnce: [],
                              busy: "too many of its (or all applications') requests are already waiting for the user"))
                return
            }
            pending[application, default: 0] += 1
            ask(consent, request, about: toAsk, for: client, as: identified) { [self] allowedOnce, refusedNow in
                pending[application, default: 1] -= 1
                if pending[application] == 0 { pending[application] = nil }
                if pending.isEmpty { departed.withLock { $0.removeAll() } }
                remember(denials: refusedNow, of: request.action, to: application)
                // Decided again now, right before the secrets are read or the items changed: a
                // dialog takes time, and a grant or a lock may have come meanwhile.
                let now = server.keychain.decide(request.action, of: references, by: identified.application,
                                                 digest: { identified.knownExecutableDigest })
                then(conclude(request, references, now, as: identified, allowedOnce: allowedOnce))
            }
        }
    }

    /// What `decisions` (made on the loop thread right before the secrets are read or the items
    /// changed) and the user's "Allow once" answers let the client do; audited.
    private func conclude(_ request: AccessRequest, _ references: [ItemReference], _ decisions: [ItemDecision], as identified: Caller,
                          allowedOnce: Set<ItemReference>, busy: String? = nil) -> Authorization {
        var result = Authorization(application: identified.application, verdicts: [])
        result.verdicts.reserveCapacity(references.count)
        var details: [String?] = []
        details.reserveCapacity(references.count)
        var used: Set<CollectionID> = []
        var lastUsed: CollectionID?
        for (reference, decided) in zip(references, decisions) {
            let (verdict, detail) = verdict(request.action, on: reference, decided, for: identified.application,
                                            allowedOnce: allowedOnce, busy: busy)
            result.verdicts.append(verdict)
            details.append(detail)
            if verdict == .allowed, reference.collection != lastUsed {
                used.insert(reference.collection)
                lastUsed = reference.collection
            }
        }
        record(request, references, result, decisions: decisions, details: details)
        for collection in used { server.autoLock.used(collection) }
        return result
    }

    /// What `decided` lets `application` do to `reference`, and when it may, why (for the
    /// audit log).
    private func verdict(_ action: AccessAction, on reference: ItemReference, _ decided: ItemDecision, for application: Application,
                         allowedOnce: Set<ItemReference>, busy: String?) -> (AccessVerdict, String?) {
        switch decided {
        case .locked: return (.locked, nil)
        case .missing: return (.missing, nil)
        case .rulesUnreadable(let why): return (.refused("the collection's access rules cannot be read (\(why))"), nil)
        case .decided(let decision, _):
            switch decision {
            case .allowed(.openPolicy): return (.allowed, "open policy")
            case .allowed(.creator): return (.allowed, "creator")
            case .allowed(.granted): return (.allowed, "granted")
            case .reserved: return (.refused(ApplicationKey.refusal), nil)
            case .ask where allowedOnce.contains(reference):
                return (.allowed, "allowed once by the user")
            case .ask where isDenied(action, of: reference, to: Self.asker(application), now: Clock.now()):
                let what = action == .read ? "access to" : "changes to"
                return (.refused("the user denied it \(what) this item (asked again in at most \(Self.denialMemory / 60) minutes)"), nil)
            case .ask:
                return (.refused(busy ?? "the user was not asked: no dialog could be shown (see the service's log)"), nil)
            case .denied where !application.isVerified:
                return (.refused("the collection's policy is strict, which serves only an item's creator and applications granted access, "
                                 + "and the service cannot verify which program this process is (its executable cannot be read: "
                                 + "it made itself non-dumpable), so no grant can name it"), nil)
            case .denied:
                return (.refused("the collection's policy is strict and it has no grant for this item"), nil)
            }
        }
    }
}
