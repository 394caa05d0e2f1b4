import CofferCore
import DBusKit
import Synchronization
import SystemKit

/// What a client may do with one of the items it asked to read.
enum ReadVerdict: Equatable, Sendable {
    /// It may read it: only these are read.
    case allowed
    /// Its collection is locked (GetSecret answers IsLocked; GetSecrets leaves it out).
    case locked
    /// It does not exist.
    case missing
    /// It may not read it; why, in words for the client's error message.
    case refused(String)
}

/// What a client may read of the items it asked for.
struct ReadAuthorization: Sendable {
    /// The application the client was identified as (nil: it could not be).
    var application: Application?
    /// One verdict per item asked about, in the order they were asked for.
    var verdicts: [ReadVerdict]
}

/// Decides whether the application behind a client may read the secrets it asks for: allowed
/// by the collection's policy, because it created the item, or by a grant; else (policy `ask`)
/// the user is asked — Allow once, Always allow (remembered as a grant), or Deny — or (policy
/// `strict`) refused. Every decision is written to the audit log.
///
/// Runs on the loop thread; dialogs run one at a time on the prompts' dialog queue. So that no
/// program can flood the user with dialogs (also by opening many connections): an application
/// has at most `maxPendingPerApplication` dialogs waiting and all at most `maxPending`; what the
/// user denied an application stays denied, without asking, for `denialMemory` seconds (or
/// until a grant); a dialog whose client left the bus before its turn is not shown.
final class AccessGate: @unchecked Sendable {
    private unowned let server: SecretServer
    private let identifier: CallerIdentifier
    private let consent: (any ConsentAsker)?
    private let audit: (any AuditRecorder)?

    private struct Denial: Hashable {
        let application: Application
        let item: ItemReference
    }
    /// What the user denied, until when (seconds since 1970).
    private var denied: [Denial: UInt64] = [:]
    /// Consent dialogs asked for and not yet answered, per application.
    private var pending: [Application: Int] = [:]
    /// Clients that left the bus (read by the dialog thread before showing their dialog).
    private let departed = Mutex<Set<String>>([])

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

    private func isDenied(_ reference: ItemReference, to application: Application, now: UInt64) -> Bool {
        guard let until = denied[Denial(application: application, item: reference)] else { return false }
        return now < until
    }

    private func remember(denials references: Set<ItemReference>, of application: Application) {
        let now = Clock.now()
        if denied.count + references.count > Self.maxDenials {
            denied = denied.filter { $0.value > now }
            while denied.count + references.count > Self.maxDenials, let oldest = denied.min(by: { $0.value < $1.value }) {
                denied[oldest.key] = nil
            }
        }
        for reference in references { denied[Denial(application: application, item: reference)] = now + Self.denialMemory }
    }

    /// Closes the consent dialogs on screen (their reads are then refused).
    func closeDialogs() {
        consent?.closeDialogs()
    }

    /// Writes `event` to the audit log once the call at hand is answered: the write is not on
    /// the client's path, and lines keep the order they were recorded in.
    func record(_ event: AuditEvent) {
        guard let audit else { return }
        server.connection.post { audit.record(event) }
    }

    // MARK: Reads

    /// Decides each of `references` for `client`; calls `then` on the loop thread (at once when
    /// nobody needs to be asked). `digestRead`: the caller's executable digest was read already
    /// (or could not be).
    func authorizeReads(of references: [ItemReference], by client: String, digestRead: Bool = false,
                        then: @escaping @Sendable (ReadAuthorization) -> Void) {
        application(of: client) { [self] identified in
            guard let identified else {
                let refused = ReadVerdict.refused("the service cannot tell which application is asking (see its log)")
                let result = ReadAuthorization(verdicts: Array(repeating: refused, count: references.count))
                record(references, result, decisions: references.map { _ in .missing }, details: references.map { _ in nil })
                then(result)
                return
            }
            // A grant tied to one binary needs the caller's executable hashed: off the loop, once.
            var needsDigest = false
            let decisions = server.keychain.decide(reads: references, by: identified.application, digest: {
                if digestRead || identified.knownExecutableDigest != nil { return identified.knownExecutableDigest }
                needsDigest = true
                return nil
            })
            if needsDigest {
                identifier.executableDigest(of: identified) { [self] _ in authorizeReads(of: references, by: client, digestRead: true, then: then) }
                return
            }
            let now = Clock.now()
            let application = Self.asker(identified.application)
            let toAsk = Array(Set(zip(references, decisions).compactMap { reference, decided in
                decided.decision == .ask && !isDenied(reference, to: application, now: now) ? reference : nil
            }))
            guard !toAsk.isEmpty else {
                then(conclude(references, decisions, for: client, as: identified, allowedOnce: []))
                return
            }
            guard let consent else {
                let collections = Set(toAsk.map(\.collection)).sorted()
                server.log("\(identified) was refused \(toAsk.count) secret(s): no dialog can ask the user (no pinentry); "
                           + (identified.application.isVerified ? "" : "it is unverified (\(identified.unverifiedBecause ?? "")); ")
                           + collections.map { Self.howToAllow(identified.application, in: $0) }.joined(separator: "; "))
                then(conclude(references, decisions, for: client, as: identified, allowedOnce: []))
                return
            }
            guard pending[application, default: 0] < Self.maxPendingPerApplication,
                  pending.values.reduce(0, +) < Self.maxPending else {
                then(conclude(references, decisions, for: client, as: identified, allowedOnce: [],
                              busy: "too many of its (or all applications') requests are already waiting for the user"))
                return
            }
            pending[application, default: 0] += 1
            ask(consent, about: toAsk, for: client, as: identified) { [self] allowedOnce, refusedNow in
                pending[application, default: 1] -= 1
                if pending[application] == 0 { pending[application] = nil }
                if pending.isEmpty { departed.withLock { $0.removeAll() } }
                remember(denials: refusedNow, of: application)
                // Decided again now, right before the secrets are read: a dialog takes time,
                // and a grant or a lock may have come meanwhile.
                let now = server.keychain.decide(reads: references, by: identified.application,
                                                 digest: { identified.knownExecutableDigest })
                then(conclude(references, now, for: client, as: identified, allowedOnce: allowedOnce))
            }
        }
    }

    /// What `decisions` (made on the loop thread right before the secrets are read) and the
    /// user's "Allow once" answers let the client read; audited.
    private func conclude(_ references: [ItemReference], _ decisions: [ReadDecision], for client: String, as identified: Caller,
                          allowedOnce: Set<ItemReference>, busy: String? = nil) -> ReadAuthorization {
        var result = ReadAuthorization(application: identified.application, verdicts: [])
        result.verdicts.reserveCapacity(references.count)
        var details: [String?] = []
        details.reserveCapacity(references.count)
        var used: Set<CollectionID> = []
        var lastUsed: CollectionID?
        for (reference, decided) in zip(references, decisions) {
            let (verdict, detail) = verdict(on: reference, decided, for: identified.application, allowedOnce: allowedOnce, busy: busy)
            result.verdicts.append(verdict)
            details.append(detail)
            if verdict == .allowed, reference.collection != lastUsed {
                used.insert(reference.collection)
                lastUsed = reference.collection
            }
        }
        record(references, result, decisions: decisions, details: details)
        for collection in used { server.autoLock.used(collection) }
        return result
    }

    /// What `decided` lets `application` do with `reference`, and for an item it may read, why
    /// (for the audit log).
    private func verdict(on reference: ItemReference, _ decided: ReadDecision, for application: Application,
                         allowedOnce: Set<ItemReference>, busy: String?) -> (ReadVerdict, String?) {
        switch decided {
        case .locked: return (.locked, nil)
        case .missing: return (.missing, nil)
        case .rulesUnreadable(let why): return (.refused("the collection's access rules cannot be read (\(why))"), nil)
        case .decided(let decision, _):
            switch decision {
            case .allowed(.openPolicy): return (.allowed, "open policy")
            case .allowed(.creator): return (.allowed, "creator")
            case .allowed(.granted): return (.allowed, "granted")
            case .ask where allowedOnce.contains(reference):
                return (.allowed, "allowed once by the user")
            case .ask where isDenied(reference, to: Self.asker(application), now: Clock.now()):
                return (.refused("the user denied it access to this item (asked again in at most \(Self.denialMemory / 60) minutes)"), nil)
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

    /// One audit event per item decided (each item once, however often it was asked for), in
    /// one write once the call is answered; the events are made then too, so that the client
    /// does not wait for them. `details`: why each item allowed was (nil for the others).
    private func record(_ references: [ItemReference], _ result: ReadAuthorization, decisions: [ReadDecision],
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
                case .allowed: (.ok, details[position])
                case .locked, .missing: (.ok, nil)
                }
                guard let detail else { continue }
                events.append(AuditEvent(time: time, action: .read, outcome: outcome, application: result.application,
                                         collection: reference.collection, item: reference.item,
                                         label: decisions[position].label, detail: detail))
            }
            audit.record(contentsOf: events)
        }
    }

    /// What would let `application` read the secrets of `collection`: a grant (unless it is
    /// unverified, which no grant can name), or the open policy.
    static func howToAllow(_ application: Application, in collection: CollectionID) -> String {
        let policy = "coffer policy open --collection \(collection)"
        guard application.isVerified else { return "to let every application read '\(collection)': \(policy)" }
        return "to allow it: coffer access grant \(ShellQuoting.quoted(application.encoded)) --collection \(collection)"
            + " (or every application: \(policy))"
    }

    /// The error a client gets for a secret it may not read: who, why, and what would allow it
    /// (a grant, or the collection's policy). `others`: how many more items, asked for in the
    /// same call, were refused too.
    static func refusal(of reference: ItemReference, to application: Application?, because why: String,
                        others: Int = 0) -> DBusError {
        let policy = "coffer policy open --collection \(reference.collection)"
        let what = "item \(reference)" + (others > 0 ? " (and \(others) more asked for with it)" : "")
        guard let application else {
            return .accessDenied("Access denied to \(what): \(why). To let every application read this collection: \(policy)")
        }
        guard application.isVerified else {
            return .accessDenied("Access denied: \(application) may not read \(what): \(why). "
                + "No grant can name a process the service cannot verify; to let every application read this collection: \(policy)")
        }
        return .accessDenied("Access denied: \(application) may not read \(what): \(why). "
            + "To allow it: coffer access grant \(ShellQuoting.quoted(application.encoded)) --collection \(reference.collection)"
            + (others > 0 ? "" : " --item \(reference.item)") + " (or every application: \(policy))")
    }

    // MARK: Dialogs

    /// Asks the user about `references` (one dialog per collection), on the dialog queue;
    /// answers on the loop thread with the items allowed once and those denied. "Always allow"
    /// is stored as a grant per item before answering.
    private func ask(_ consent: any ConsentAsker, about references: [ItemReference], for client: String,
                     as identified: Caller,
                     then: @escaping @Sendable (_ allowedOnce: Set<ItemReference>, _ denied: Set<ItemReference>) -> Void) {
        let keychain = server.keychain
        let connection = server.connection
        let log = server.log
        let audit = self.audit
        let byCollection = Dictionary(grouping: references, by: \.collection)
        Prompt.dialogs.async { [self] in
            var allowedOnce: Set<ItemReference> = []
            var refused: Set<ItemReference> = []
            for (collection, items) in byCollection.sorted(by: { $0.key < $1.key }) {
                // Its client left while it waited: nobody is there to read the answer.
                guard !departed.withLock({ $0.contains(client) }) else { break }
                // An earlier dialog may have answered for these already ("Always allow").
                let decisions = keychain.decide(reads: items, by: identified.application, digest: { identified.executableDigest })
                let still = zip(items, decisions).filter { $0.1.decision == .ask }.map(\.0).sorted { $0.item < $1.item }
                guard !still.isEmpty else { continue }
                let answer = consent.confirm(Self.request(for: still, in: collection, by: identified.application, keychain: keychain))
                switch answer {
                case .allowOnce:
                    allowedOnce.formUnion(still)
                case .allowAlways where !identified.application.isVerified:
                    refused.formUnion(still)   // the dialog offered no such answer: no grant can name it
                case .allowAlways:
                    do {
                        let now = Clock.now()
                        try keychain.updateAccess(of: collection) { access in
                            for reference in still {
                                access.add(AccessGrant(application: identified.application, item: reference.item, granted: now), now: now)
                            }
                        }
                        for reference in still {
                            audit?.record(AuditEvent(action: .grant, outcome: .ok, application: identified.application,
                                                     collection: collection, item: reference.item,
                                                     label: try? keychain.metadata(of: reference).label,
                                                     detail: "always allowed by the user"))
                        }
                    } catch {
                        log("cannot remember the grant for \(identified.application) in \(collection): \(error); allowed this time only")
                        allowedOnce.formUnion(still)
                    }
                case .deny:
                    refused.formUnion(still)
                case .unavailable(let why):
                    log("\(identified.application) was refused \(still.count) secret(s) of \(collection): the user could not be asked (\(why)); "
                        + Self.howToAllow(identified.application, in: collection))
                }
            }
            let answers = (allowedOnce, refused)
            connection.post { then(answers.0, answers.1) }
        }
    }

    /// The dialog's text: who wants what, and who made it. Labels and names come from other
    /// programs: they are shortened and cleaned of control, line-breaking and bidirectional
    /// characters, so that they cannot dress the question up as something else.
    static func request(for references: [ItemReference], in collection: CollectionID, by application: Application,
                        keychain: Keychain) -> ConsentRequest {
        let metadata = references.map { try? keychain.metadata(of: $0) }
        let labels = zip(references, metadata).prefix(5).map { reference, metadata in
            "'\(clean(metadata?.label ?? "item \(reference.item)"))'"
        }
        let keyring = clean((try? keychain.info(collection).label) ?? collection.rawValue)
        let creators = Set(metadata.map { $0?.creator.map { clean($0.description) } ?? "an unknown application" })
        let what = references.count == 1
            ? "the secret \(labels[0])"
            : "\(references.count) secrets (\(labels.joined(separator: ", "))\(references.count > 5 ? ", …" : ""))"
        let wanted = "wants to read \(what) in the keyring '\(keyring)', created by \(creators.sorted().joined(separator: ", "))."
        guard application.isVerified else {
            return ConsentRequest(
                title: "Allow access to a secret?",
                description: "A program that cannot be verified, calling itself '\(clean(application.name, limit: 16))', \(wanted)\n\n"
                    + "It hides which program it is (it made itself non-dumpable), so this answer cannot be remembered for it: "
                    + "allow only if you just started a program that needs this secret.",
                allowAlways: nil)
        }
        return ConsentRequest(
            title: "Allow access to a secret?",
            description: "\(clean(application.description, limit: .max)) \(wanted)\n\n"
                + "Always allow remembers your answer for this application (`coffer access list` shows it).")
    }

    /// `text` safe to show: at most `limit` characters; control, line-breaking and
    /// bidirectional formatting characters as `?`.
    static func clean(_ text: String, limit: Int = 80) -> String {
        let unsafe: (Unicode.Scalar) -> Bool = { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
                || (0x200E...0x200F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0x061C
        }
        var scalars = String.UnicodeScalarView(text.unicodeScalars.map { unsafe($0) ? "?" : $0 })
        if scalars.count > limit {
            scalars = String.UnicodeScalarView(scalars.prefix(limit - 1))
            scalars.append("…")
        }
        return String(scalars)
    }
}
