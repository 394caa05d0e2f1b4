import CofferCore
import CofferCrypto
import DBusKit
import Dispatch
import SecretServiceProtocol
import Synchronization
import SystemKit

/// The Secret Service on one bus connection: it owns the sessions and prompts, resolves object
/// paths to the Service, Collection, Item, Session and Prompt objects, and translates every
/// call into the core `Keychain`.
///
/// Everything here runs on the connection's loop thread, except slow work (key derivation,
/// password dialogs), which runs on other threads and posts its results back.
public final class SecretServer: DBusObjectTree, Sendable {
    let keychain: Keychain
    let connection: DBusConnection
    /// Where the password checks clients ask for run (bounded, one per collection at a time).
    let passwordChecks: PasswordChecks
    let passwords: (any PasswordAsker)?
    let log: @Sendable (String) -> Void
    /// Decides which application may read which secret (see `AccessGate`). Made as `init`
    /// ends (it needs the server), before any other thread can see the server.
    var gate: AccessGate { madeGate.load()! }
    private let madeGate = AtomicLazyReference<AccessGate>()
    /// Locks collections by themselves (see `AutoLock`). Made as `init` ends, as `gate` is.
    var autoLock: AutoLock { madeAutoLock.load()! }
    private let madeAutoLock = AtomicLazyReference<AutoLock>()
    /// What the server changes as it serves: the loop thread's alone (checked: `LoopOwned`).
    struct LoopState {
        var sessions: [UInt64: TransferSession] = [:]
        /// How many sessions each client holds.
        var sessionCounts: [String: Int] = [:]
        var nextSession: UInt64 = 1
        /// Counts session opens and uses: the clock `TransferSession.lastUsed` is read on.
        var sessionClock: UInt64 = 0
        var prompts: [UInt64: Prompt] = [:]
        var nextPrompt: UInt64 = 1
        /// One writer per collection written to (see `CollectionWriter`).
        var writers: [CollectionID: CollectionWriter] = [:]
        var tokens: [HandlerToken] = []
    }
    private let state: LoopOwned<LoopState>

    /// Re-unlocks a collection that locked by itself, within its window (none: password only).
    /// Set before the loop runs; read by the threads that show password dialogs.
    /// Unlocks a collection through its TPM key slot, with the PIN if any (empty: none); set
    /// by the daemon, which knows the store and the TPM. Without it, UnlockWithTPM is refused.
    public var tpmUnlock: (@Sendable (CollectionID, SecureBytes) throws -> Void)? {
        get { tpmUnlocker.withLock { $0 } }
        set { tpmUnlocker.withLock { $0 = newValue } }
    }
    /// What each synced collection's last sync round found wrong (`reportSyncProblems`).
    let syncProblems = Mutex<[CollectionID: [String]]>([:])
    private let tpmUnlocker = Mutex<(@Sendable (CollectionID, SecureBytes) throws -> Void)?>(nil)

    public var fingerprint: (any FingerprintReader)? {
        get { fingerprintReader.withLock { $0 } }
        set { fingerprintReader.withLock { $0 = newValue } }
    }
    private let fingerprintReader = Mutex<(any FingerprintReader)?>(nil)
    private(set) var sessions: [UInt64: TransferSession] {
        get { state.value.sessions }
        _modify { yield &state.value.sessions }
    }
    private var sessionCounts: [String: Int] {
        get { state.value.sessionCounts }
        _modify { yield &state.value.sessionCounts }
    }
    private var nextSession: UInt64 {
        get { state.value.nextSession }
        _modify { yield &state.value.nextSession }
    }
    private var sessionClock: UInt64 {
        get { state.value.sessionClock }
        _modify { yield &state.value.sessionClock }
    }
    var prompts: [UInt64: Prompt] {
        get { state.value.prompts }
        _modify { yield &state.value.prompts }
    }
    private var nextPrompt: UInt64 {
        get { state.value.nextPrompt }
        _modify { yield &state.value.nextPrompt }
    }
    var writers: [CollectionID: CollectionWriter] {
        get { state.value.writers }
        _modify { yield &state.value.writers }
    }
    private var tokens: [HandlerToken] {
        get { state.value.tokens }
        _modify { yield &state.value.tokens }
    }

    /// How many sessions one client (unique bus name) may hold open; opening one more closes
    /// its least recently used session. gnome-keyring has no limit, and clients such as
    /// SecretStorage open a session per item and never close them, so the limit is high and a
    /// client is never refused: only sessions it stopped using go.
    static let maxSessionsPerClient = 1024
    /// How many sessions all clients may hold; past it, the least recently used session of the
    /// client holding the most is closed. Each DH session keeps a 16-byte key in secure memory.
    static let maxSessions = 16384
    /// How many prompts one client may have pending (created and not yet completed).
    static let maxPromptsPerClient = 8
    /// How many prompts all clients may have pending.
    static let maxPrompts = 256
    /// The most a GetSecrets reply may carry: below the smallest message limit dbus-daemon
    /// applies by default (32 MiB), since a bus drops the connection of a sender that passes it.
    static let maxReplyBytes = 24 << 20

    /// A server for `keychain` on `connection`. `passwords` shows password dialogs for
    /// prompts (none: every prompt completes as dismissed); `consent` asks the user whether an
    /// application may read a secret it did not create (none: such reads are refused where the
    /// collection's policy would ask). `audit` gets every read, write, delete, unlock, lock and
    /// grant; `log` one line per session, unlock and lock. Neither ever gets a secret.
    /// `lockSettings` says when collections lock by themselves (read again at each decision).
    public init(keychain: Keychain, connection: DBusConnection, passwords: (any PasswordAsker)?,
                consent: (any ConsentAsker)? = nil, audit: (any AuditRecorder)? = nil,
                lockSettings: @escaping @Sendable () -> LockConfiguration = { LockConfiguration() },
                log: @escaping @Sendable (String) -> Void) {
        self.keychain = keychain
        self.connection = connection
        state = LoopOwned(LoopState(), on: connection)
        self.passwords = passwords
        self.log = log
        passwordChecks = PasswordChecks(secondsLeft: { [keychain] id in keychain.secondsBeforeNextUnlock(id) })
        _ = madeGate.storeIfNil(AccessGate(server: self, identifier: CallerIdentifier(connection: connection),
                                           consent: consent, audit: audit))
        _ = madeAutoLock.storeIfNil(AutoLock(server: self, settings: lockSettings))
    }

    /// Registers the objects, refuses callers of other Unix users and drops the sessions and
    /// prompts of clients that leave the bus.
    public func start() throws(DBusError) {
        let ownUID = ProcessControl.userID
        connection.objectServer.accessPolicy = { _, uid in uid == ownUID }
        connection.objectServer.register(prefix: SecretPath.service, tree: self)
        tokens.append(try connection.onNameVanished { [weak self] name in self?.clientLeft(name) })
        connection.post { [self] in autoLock.start() }
    }

    // MARK: DBusObjectTree

    public func object(at path: ObjectPath) -> (any DBusObject)? {
        switch SecretPath.parse(path) {
        case .service:
            return ServiceObject(server: self)
        case .collection(let name):
            return existingCollection(named: name).map { CollectionObject(server: self, id: $0) }
        case .aliasCollection(let alias):
            return (try? keychain.resolveAlias(alias)).flatMap { $0 }.map { CollectionObject(server: self, id: $0) }
        case .item(let name, let item):
            guard let collection = CollectionID(name) else { return nil }
            let reference = ItemReference(collection: collection, item: item)
            return keychain.exists(reference) ? ItemObject(server: self, reference: reference) : nil
        case .aliasItem(let alias, let item):
            guard let collection = (try? keychain.resolveAlias(alias)).flatMap({ $0 }) else { return nil }
            let reference = ItemReference(collection: collection, item: item)
            return keychain.exists(reference) ? ItemObject(server: self, reference: reference) : nil
        case .session(let number):
            return sessions[number].map { SessionObject(server: self, number: number, session: $0) }
        case .prompt(let number):
            return prompts[number].map { PromptObject(server: self, prompt: $0) }
        case .node:
            return NodeObject()
        case nil:
            return nil
        }
    }

    public func childNames(of path: ObjectPath) -> [String] {
        if path == SecretPath.service { return ["collection", "aliases", "session", "prompt"] }
        if path == SecretPath.collections {
            return ((try? keychain.collectionIDs()) ?? []).map { ObjectPath.escapeElement($0.rawValue) }
        }
        if path == SecretPath.aliases {
            return ((try? keychain.aliases()) ?? [:]).keys.sorted().map { ObjectPath.escapeElement($0) }
        }
        if path == SecretPath.sessions { return sessions.keys.sorted().map { "s\($0)" } }
        if path == SecretPath.prompts { return prompts.keys.sorted().map { "p\($0)" } }
        switch SecretPath.parse(path) {
        case .collection(let name):
            return existingCollection(named: name).map { itemPaths(in: $0).compactMap(\.lastElement) } ?? []
        case .aliasCollection(let alias):
            guard let id = (try? keychain.resolveAlias(alias)).flatMap({ $0 }) else { return [] }
            return itemPaths(in: id).compactMap(\.lastElement)
        default:
            return []
        }
    }

    /// `…/collection`, `…/aliases`, `…/session` and `…/prompt`: no interface of their own, but
    /// always there, so that they answer Introspect (listing their children) also while empty;
    /// the service object lists them, and tree walkers stop at the first child that fails.
    struct NodeObject: DBusObject {
        var interfaces: [InterfaceDescription] { [] }
    }

    // MARK: Lookups shared by the objects

    func collectionExists(_ id: CollectionID) -> Bool {
        ((try? keychain.collectionIDs()) ?? []).contains(id)
    }

    /// The collection whose id is `name`, if there is one.
    func existingCollection(named name: String) -> CollectionID? {
        CollectionID(name).flatMap { collectionExists($0) ? $0 : nil }
    }

    /// The collection a collection or alias path names.
    func collectionID(at path: ObjectPath) -> CollectionID? {
        switch SecretPath.parse(path) {
        case .collection(let name): return existingCollection(named: name)
        case .aliasCollection(let alias): return (try? keychain.resolveAlias(alias)).flatMap { $0 }
        default: return nil
        }
    }

    /// The item an item path (real or through an alias) names, if it exists.
    func itemReference(at path: ObjectPath) -> ItemReference? {
        guard let reference = itemReference(named: path) else { return nil }
        return keychain.exists(reference) ? reference : nil
    }

    /// The item an item path names, without checking that it exists (for callers whose next
    /// keychain call reports a missing item anyway).
    func itemReference(named path: ObjectPath) -> ItemReference? {
        switch SecretPath.parse(path) {
        case .item(let name, let item):
            return CollectionID(name).map { ItemReference(collection: $0, item: item) }
        case .aliasItem(let alias, let item):
            guard let collection = (try? keychain.resolveAlias(alias)).flatMap({ $0 }) else { return nil }
            return ItemReference(collection: collection, item: item)
        default:
            return nil
        }
    }

    func itemPaths(in id: CollectionID) -> [ObjectPath] {
        ((try? keychain.search(Query(collection: id))) ?? []).map { SecretPath.item($0.reference) }
    }

    func collectionPaths() -> [ObjectPath] {
        ((try? keychain.collectionIDs()) ?? []).map(SecretPath.collection)
    }

    /// The caller's own session at `path`; anything else is `NoSession`.
    func session(at path: ObjectPath, for caller: String) throws(DBusError) -> TransferSession {
        guard case .session(let number) = SecretPath.parse(path), let session = sessions[number], session.owner == caller else {
            throw SecretServiceError.noSession("no session \(path) for this caller; call OpenSession first").dbusError
        }
        sessionClock += 1
        session.lastUsed = sessionClock
        return session
    }

    /// The secret a client sent in `call`, decoded with the caller's session named in it. One
    /// that came in clear (a `plain` session) leaves no copy in libdbus's buffers (as one that
    /// came encrypted leaves only ciphertext there): see `MethodCall.overwriteReceivedBytes`.
    func secret(from wire: WireSecret, of call: MethodCall) throws(DBusError) -> Secret {
        let session = try session(at: wire.session, for: call.sender)
        if case .plain = session.algorithm { call.overwriteReceivedBytes() }
        let secret = try session.decode(wire)
        do {
            try Limits.validate(secret: secret)
        } catch {
            throw DBusError(converting: error)
        }
        return secret
    }

    // MARK: Sessions

    func openSession(algorithm: String, input: DBusValue, caller: String) throws(DBusError) -> ServiceInterface.OpenSession.Output {
        let number = nextSession
        let path = SecretPath.session(number)
        let (session, output) = try TransferSession.open(algorithm: algorithm, input: input, path: path, owner: caller)
        if sessionCounts[caller, default: 0] >= Self.maxSessionsPerClient {
            closeLeastRecentlyUsedSession(of: caller, why: "it holds \(Self.maxSessionsPerClient) sessions")
        }
        if sessions.count >= Self.maxSessions, let largest = sessionCounts.max(by: { $0.value < $1.value })?.key {
            closeLeastRecentlyUsedSession(of: largest, why: "all clients hold \(Self.maxSessions) sessions, it the most")
        }
        nextSession += 1
        sessionClock += 1
        session.lastUsed = sessionClock
        sessions[number] = session
        sessionCounts[caller, default: 0] += 1
        log("session \(path.lastElement ?? "") opened by \(caller) (\(algorithm))")
        return .init(output: output, session: path)
    }

    func closeSession(_ number: UInt64) {
        guard let session = removeSession(number) else { return }
        log("session s\(number) of \(session.owner) closed")
    }

    private func closeLeastRecentlyUsedSession(of owner: String, why: String) {
        guard let (number, _) = sessions.lazy.filter({ $0.value.owner == owner })
            .min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { return }
        removeSession(number)
        log("session s\(number) of \(owner) closed, the least recently used, because \(why)")
    }

    @discardableResult
    private func removeSession(_ number: UInt64) -> TransferSession? {
        guard let session = sessions.removeValue(forKey: number) else { return nil }
        sessionCounts[session.owner, default: 1] -= 1
        if sessionCounts[session.owner] == 0 { sessionCounts[session.owner] = nil }
        return session
    }

    private func clientLeft(_ name: String) {
        gate.forget(name)
        passwordChecks.forget(name)
        for (number, session) in sessions where session.owner == name {
            removeSession(number)
            log("session s\(number) of \(name) ended: the client left the bus")
        }
        for (number, prompt) in prompts where prompt.owner == name {
            prompts[number] = nil
            prompt.abandon()
        }
    }

    // MARK: Prompts

    /// A new pending prompt for `owner`; `LimitsExceeded` if it already has the most allowed.
    func makePrompt(owner: String, action: Prompt.Action) throws(DBusError) -> ObjectPath {
        guard prompts.values.count(where: { $0.owner == owner }) < Self.maxPromptsPerClient else {
            throw SecretServiceError.limitsExceeded("a client may have at most \(Self.maxPromptsPerClient) pending prompts; run or dismiss them first").dbusError
        }
        guard prompts.count < Self.maxPrompts else {
            throw SecretServiceError.limitsExceeded("\(Self.maxPrompts) prompts are pending; try again once some are done").dbusError
        }
        let number = nextPrompt
        nextPrompt += 1
        prompts[number] = Prompt(number: number, owner: owner, action: action, server: self)
        return SecretPath.prompt(number)
    }

    func finishPrompt(_ prompt: Prompt) {
        prompts[prompt.number] = nil
    }

    // MARK: Slow work

    /// Answers `call` with what `work` makes, run as a password check (`PasswordChecks`):
    /// `collection` is the one whose password it checks (nil for a new collection). `then`
    /// runs on the loop thread before a success's reply, `failed` after a failure's.
    func checkingPassword<Output: DBusArguments>(_ call: MethodCall, of collection: CollectionID?,
                                                 _ work: @escaping @Sendable () throws -> Output,
                                                 then: @escaping @Sendable () -> Void = {},
                                                 failed: @escaping @Sendable (any Error) -> Void = { _ in }) -> MethodResult {
        gate.application(of: call.sender) { [self] identified in
            do {
                try checkPassword(call, of: collection, requester: identified.map { AccessGate.asker($0.application).encoded } ?? call.sender, work,
                                  then: then, failed: failed)
            } catch {
                call.fail(error)
            }
        }
        return .deferred
    }

    private func checkPassword<Output: DBusArguments>(_ call: MethodCall, of collection: CollectionID?, requester: String,
                                                      _ work: @escaping @Sendable () throws -> Output,
                                                      then: @escaping @Sendable () -> Void,
                                                      failed: @escaping @Sendable (any Error) -> Void) throws {
        let connection = self.connection
        let output = Mutex<Output?>(nil)
        try passwordChecks.submit(PasswordChecks.Check(client: call.sender, requester: requester, collection: collection, work: {
            let made = try work()
            output.withLock { $0 = made }
        }, done: { outcome in
            switch outcome {
            case .success:
                guard let made = output.withLock({ $0.take() }) else { return }
                connection.post {
                    then()
                    call.reply(made)
                }
            case .failure(let error):
                connection.post { failed(error) }
                call.fail(error)
            }
        }))
    }

    /// Alias changes, one at a time, off the loop (each replaces the `aliases` file).
    let aliasWrites = DispatchQueue(label: "coffer.aliases")
}
