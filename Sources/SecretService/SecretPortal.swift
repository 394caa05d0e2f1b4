import CofferCore
import CofferCrypto
import DBusKit
import Dispatch
import SecretServiceProtocol
import SystemKit

/// The Secret portal's backend: hands a sandboxed application, through xdg-desktop-portal,
/// its master secret.
///
/// The secret is 64 random bytes, made on an application's first request and kept as an item
/// of the collection the `default` alias names (attributes `app_id` and `xdg:schema`
/// `org.freedesktop.portal.Secret`, label "Application key for APP-ID", the application as its
/// creator); every later request gets the same bytes, written to the descriptor the portal
/// passes. Only xdg-desktop-portal may ask: it alone knows which application is asking, and
/// anyone else could name any application and take its secret.
///
/// A request is checked on the loop thread (one call to the bus, not waited for); the rest —
/// unlocking, the store, writing — runs on a queue of its own, one request at a time, so that
/// two first requests of one application make one secret. Each request is one line in the
/// log and one `portal` event in the audit log; neither ever holds the secret.
final class SecretPortal: Sendable {
    private let server: SecretServer
    private let audit: (any AuditRecorder)?
    /// The programs that may be the frontend (the executable of xdg-desktop-portal).
    private let frontends: Set<String>
    private let requests = DispatchQueue(label: "coffer.secret-portal", qos: .userInitiated)

    /// How many random bytes a master secret has (as gnome-keyring's and oo7's).
    static let secretLength = 64
    /// How long a write may wait for a reader that does not read.
    static let writeTimeout: Duration = .seconds(10)

    init(server: SecretServer, audit: (any AuditRecorder)?, frontends: Set<String>) {
        self.server = server
        self.audit = audit
        self.frontends = frontends
    }


    typealias RetrieveSecret = PortalSecretInterface.RetrieveSecret

    /// Answers `call` later: AccessDenied unless xdg-desktop-portal sent it, InvalidArgs for an
    /// application id that cannot be one, else the secret written and response 0 (1 when the
    /// user did not unlock the collection).
    func retrieveSecret(_ input: RetrieveSecret.Input, call: MethodCall) -> MethodResult {
        server.connection.nameOwner(PortalSecretInterface.frontendBusName) { [self] owner in
          // The name's owner must also be xdg-desktop-portal's program: where the portal does not
          // run, any program could otherwise take its name and ask for every app's secret.
          server.gate.application(of: call.sender) { [self] identified in
            do {
                try checkCaller(call.sender, owner: owner, appID: input.appID)
                try checkFrontend(call.sender, identified?.application, appID: input.appID)
                if let problem = Self.problem(withAppID: input.appID) {
                    server.log("secret portal: refused a request of \(call.sender): its application id is none (\(problem))")
                    record(nil, .denied, detail: "not an application id: \(problem)")
                    throw DBusError.invalidArgs("'\(input.appID)' is not an application id: \(problem)")
                }
            } catch {
                input.fd.close()
                call.fail(error)
                return
            }
            requests.async { [self] in
                defer { input.fd.close() }
                do {
                    let response = try serve(appID: input.appID, fd: input.fd, caller: call.sender)
                    call.reply(RetrieveSecret.Output(response: response))
                } catch {
                    let why = DBusError(converting: error).message
                    server.log("secret portal: \(input.appID): failed: \(why)")
                    record(input.appID, .failed, detail: why)
                    call.fail(error)
                }
            }
        }
          }
        return .deferred
    }

    // MARK: Who may ask, for whom

    /// AccessDenied unless `application` is xdg-desktop-portal's program.
    private func checkFrontend(_ caller: String, _ application: Application?, appID: String) throws(DBusError) {
        if let application, application.kind == .executable, frontends.contains(application.name) { return }
        let who = application.map(\.description) ?? "a program the service cannot identify"
        server.log("secret portal: refused \(caller) (\(who)), which owns \(PortalSecretInterface.frontendBusName) but is not xdg-desktop-portal")
        record(Self.problem(withAppID: appID) == nil ? appID : nil, .denied, detail: "asked by \(who), which is not xdg-desktop-portal")
        throw .accessDenied("only xdg-desktop-portal (\(frontends.sorted().joined(separator: " or "))) may ask for an application's secret; \(who) is not it")
    }

    /// AccessDenied unless `caller` owns xdg-desktop-portal's bus name (`owner`: what the bus
    /// said owns it).
    private func checkCaller(_ caller: String, owner: Result<String, DBusError>, appID: String) throws(DBusError) {
        let rule = "only xdg-desktop-portal (the owner of \(PortalSecretInterface.frontendBusName)) may ask for an application's secret"
        let refusal: String
        switch owner {
        case .success(let owner) where owner == caller:
            return
        case .success(let owner):
            refusal = "\(rule); \(caller) is not it (\(owner) is)"
        case .failure(let error) where error.name == DBusError.Name.nameHasNoOwner:
            refusal = "\(rule), and nothing owns that name now"
        case .failure(let error):
            refusal = "\(rule), and the bus could not say who owns that name: \(error.message)"
        }
        server.log("secret portal: refused \(caller), which asked for the secret of '\(appID)': it is not xdg-desktop-portal")
        record(Self.problem(withAppID: appID) == nil ? appID : nil, .denied, detail: "asked by \(caller), which is not xdg-desktop-portal")
        throw .accessDenied(refusal)
    }

    /// What is wrong with `appID` as a Flatpak application id (reverse DNS: at least two
    /// non-empty elements of `A-Z a-z 0-9 _ -` joined by dots, at most 255 bytes), or nil.
    static func problem(withAppID appID: String) -> String? {
        if appID.isEmpty { return "it is empty" }
        if appID.utf8.count > 255 { return "it is longer than 255 bytes" }
        let allowed = { (c: UInt8) in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
        }
        let elements = appID.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if elements.contains(where: { $0.contains { !allowed($0) } }) {
            return "only letters, digits, '_', '-' and '.' may appear"
        }
        if elements.count < 2 { return "it is not in reverse-DNS form (e.g. org.example.App)" }
        if elements.contains(where: \.isEmpty) { return "it has an empty element between dots" }
        return nil
    }

    // MARK: The secret (off the loop)

    /// Unlocks the default collection if need be, finds or makes `appID`'s secret and writes
    /// it to `fd`.
    private func serve(appID: String, fd: UnixFileDescriptor, caller: String) throws -> PortalSecretInterface.Response {
        let keychain = server.keychain
        guard try fd.withDescriptor({ $0.isOpenForWriting }) else {
            throw DBusError.invalidArgs("the file descriptor passed for the secret of '\(appID)' is not open for writing")
        }
        guard let id = try keychain.resolveAlias(Keychain.defaultAlias) else {
            throw DBusError.failed("there is no default collection to keep the secret of '\(appID)' in: create one (coffer create-collection login) or point the default alias at one (coffer alias set default ID)")
        }
        if try keychain.info(id).isLocked {
            let label = (try? keychain.info(id).label) ?? id.rawValue
            let outcome = server.unlockThroughDialog(id, requester: "the Secret portal for \(appID)",
                                                     application: Application(kind: .flatpak, name: appID),
                                                     description: "The application '\(appID)' wants its secret from the keyring '\(label)', but it is locked.")
            switch outcome {
            case .unlocked, .alreadyUnlocked:
                break
            case .cancelled:
                server.log("secret portal: \(appID): cancelled: collection \(id) stayed locked (the unlock dialog was cancelled)")
                record(appID, .failed, collection: id, detail: "cancelled: the unlock dialog was cancelled")
                return .cancelled
            case .notUnlocked(let why):
                server.log("secret portal: \(appID): cancelled: collection \(id) stayed locked: \(why)")
                record(appID, .failed, collection: id, detail: "cancelled: the collection stayed locked")
                return .cancelled
            }
        }
        let (secret, item, made) = try secret(of: appID, in: id)
        do {
            try fd.withDescriptor { try secret.bytes.writeAll(to: $0, timeout: Self.writeTimeout) }
        } catch {
            let reason = (error as? Errno)?.reason ?? "\(error)"
            throw DBusError.failed("cannot write the secret of '\(appID)' to the file descriptor passed: \(reason)")
        }
        server.log("secret portal: \(appID): \(made ? "made a new secret" : "found its secret") in collection \(id), written for \(caller)")
        record(appID, .ok, collection: id, item: item.item, label: Self.label(of: appID), detail: made ? "made" : "found")
        return .success
    }

    /// `appID`'s secret in collection `id` (unlocked), made and stored if it has none yet, and
    /// whether it was made now.
    ///
    /// An item with the portal's attributes is the application's only when the application
    /// made it (through the portal: its creator is `flatpak:APP-ID`). Any other is passed over,
    /// also one whose maker is not recorded (kept before Coffer recorded creators, or imported
    /// from gnome-keyring) or could not be verified: it could have been planted by a program
    /// that knows its bytes, to read what the application then encrypts with it.
    private func secret(of appID: String, in id: CollectionID) throws -> (Secret, ItemReference, made: Bool) {
        let attributes = [ApplicationKey.appIDAttribute: appID, ItemClass.schemaAttribute: ApplicationKey.schema]
        let application = Application(kind: .flatpak, name: appID)
        let keychain = server.keychain
        let matches = try keychain.search(Query(attributes: attributes, collection: id, returnAttributes: true))
        if matches.contains(where: \.isLocked) { throw CofferError.locked(id.rawValue) }
        let own = matches.first { $0.metadata?.creator == application }
        if let own { return (try keychain.secret(of: own.reference), own.reference, false) }
        if !matches.isEmpty {
            server.log("secret portal: \(appID): passed over \(matches.count) item(s) with its attributes that it did not make (through the portal)")
        }
        let bytes = try CofferError.catching { try Random.secureBytes(Self.secretLength) }
        let item = NewItem(label: Self.label(of: appID), attributes: attributes,
                           secret: Secret(bytes: bytes, contentType: "application/octet-stream"),
                           creator: application)
        let (reference, _) = try keychain.insert(item, into: id, onDuplicate: .allow)
        server.itemsChanged(in: id, CollectionInterface.Signal.itemCreated, reference)
        return (item.secret, reference, true)
    }

    /// The label of the item holding `appID`'s secret (gnome-keyring's).
    static func label(of appID: String) -> String { "Application key for \(appID)" }

    // MARK: The audit log

    /// Records how a request for `appID` (nil: not a valid application id) ended.
    private func record(_ appID: String?, _ outcome: AuditEvent.Outcome, collection: CollectionID? = nil,
                        item: ItemID? = nil, label: String? = nil, detail: String) {
        audit?.record(AuditEvent(action: .portal, outcome: outcome,
                                 application: appID.flatMap { Application(kind: .flatpak, name: $0) },
                                 collection: collection, item: item, label: label, detail: detail))
    }
}
