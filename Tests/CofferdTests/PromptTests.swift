import CofferCrypto
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Prompts answered by FakePinentry (the daemon runs it with `--pinentry`; it answers GETPIN
/// from the fixture's script and logs what it was told).
@Suite(.timeLimit(.minutes(10)), .enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
struct PromptTests {
    static let emptyPaths = DBusValue.array(elementSignature: .objectPath, [])

    /// Locks login, asks to unlock `paths`; returns the prompt.
    static func lockedThenUnlock(_ c: TestClient, _ paths: [ObjectPath] = [SecretPath.login]) throws -> ObjectPath {
        _ = try c.library.lock([SecretPath.login])
        #expect(try c.isLocked(SecretPath.login))
        let reply = try c.call(ServiceInterface.Unlock.self, .init(objects: paths))
        #expect(reply.unlocked.isEmpty, "nothing is unlocked before the prompt")
        #expect(reply.prompt.parent == SecretPath.prompts)
        return reply.prompt
    }

    @Test func unlockAfterAWrongPassword() throws {
        let f = try DaemonFixture(pinentry: ["wrong password", DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let item = try c.quickItem(attributes: ["p": "1"], secret: "behind the prompt")
        let prompt = try Self.lockedThenUnlock(c, [SecretPath.login])
        #expect(IntrospectionTests.interfaces(try c.introspect(prompt)).contains(PromptInterface.name))

        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(dismissed == false)
        #expect(result == .objectPathArray([SecretPath.login]))
        #expect(result.signatureString == "ao")
        // Locked is already false when Completed arrives.
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(try c.secretBytes(of: item, session: try c.library.openSession()) == Array("behind the prompt".utf8))

        // The dialog said which keyring, and showed an error after the wrong password.
        let log = f.pinentryLogText
        #expect(log.components(separatedBy: "GETPIN").count - 1 == 2, "log:\n\(log)")
        #expect(log.contains("SETERROR"), "log:\n\(log)")
        #expect(log.contains("SETDESC") && log.contains("Login"), "log:\n\(log)")
        // Completed is unicast to the caller; the prompt is gone afterwards.
        #expect(watcher.seen(PromptInterface.Signal.completed).isEmpty)
        #expect(c.signals.allSatisfy { $0.member != PromptInterface.Signal.completed })
        expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod) {
            try c.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        }
        // Others heard about the unlock.
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service)?.objectArgument == SecretPath.login)
    }

    @Test func unlockThroughAnItemPathAndSecretToolLookup() throws {
        let f = try DaemonFixture(pinentry: [DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        try f.store(label: "tool", ["lookup": "prompted"], secret: Array("prompted secret".utf8))
        let item = try #require(try c.items(of: SecretPath.login).first)
        let prompt = try Self.lockedThenUnlock(c, [item])
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(!dismissed)
        #expect(result == .objectPathArray([item]))
        #expect(try c.isLocked(SecretPath.login) == false)

        // secret-tool lookup on a locked item runs the unlock prompt itself.
        _ = try c.library.lock([SecretPath.login])
        try f.setPinentryScript([DaemonFixture.loginPassword])
        let lookup = try f.lookup(["lookup": "prompted"])
        #expect(lookup.exitCode == 0, "\(lookup)")
        #expect(lookup.stdout == "prompted secret")
        #expect(try c.isLocked(SecretPath.login) == false)
    }

    /// libsecret's store into a locked default collection: IsLocked, Unlock on the alias
    /// path, the prompt, then CreateItem again.
    @Test func secretToolStoreIntoALockedCollection() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        _ = try c.library.lock([SecretPath.login])
        try f.setPinentryScript([DaemonFixture.loginPassword])
        try f.store(label: "while locked", ["sl": "1"], secret: Array("stored after unlock".utf8))
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(try f.lookup(["sl": "1"]).stdout == "stored after unlock")

        // Cancelled: nothing is stored and the collection stays locked. (CreateItem answers with
        // a prompt that unlocks and then stores, as oo7's does; libsecret takes its dismissal
        // as the user's choice, and secret-tool exits 0 having stored nothing.)
        _ = try c.library.lock([SecretPath.login])
        try f.setPinentryScript(["CANCEL", "CANCEL"])
        _ = try f.secretTool(["store", "--label=no", "sl", "2"], stdin: "never")
        #expect(try c.library.search(["sl": "2"]).isEmpty)
        #expect(try c.isLocked(SecretPath.login))
    }

    @Test func unlockCancelled() throws {
        let f = try DaemonFixture(pinentry: ["CANCEL"])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try Self.lockedThenUnlock(c)
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(dismissed == true)
        #expect(result == Self.emptyPaths)
        #expect(try c.isLocked(SecretPath.login))
        // An empty script cancels too.
        let again = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login])).prompt
        #expect(again != prompt, "a new prompt each time")
        let second = try c.runPrompt(again)
        #expect(second.dismissed && second.result == Self.emptyPaths)
        #expect(try c.isLocked(SecretPath.login))
        #expect(f.daemonIsRunning)
    }

    @Test func dismissSendsTypedEmptyResults() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // Unlock: ao [].
        let unlock = try Self.lockedThenUnlock(c)
        try c.call(PromptInterface.Dismiss.self, on: unlock, NoArguments())
        let u = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: unlock))
        #expect(u.arguments == [.boolean(true), .variant(Self.emptyPaths)])
        #expect(try c.isLocked(SecretPath.login))
        expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod) { try c.call(PromptInterface.Dismiss.self, on: unlock, NoArguments()) }

        // CreateCollection: o "/".
        let create = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Dismissed"), alias: ""))
        #expect(create.collection == SecretPath.none)
        let createPrompt = create.prompt
        try c.call(PromptInterface.Dismiss.self, on: createPrompt, NoArguments())
        let cc = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: createPrompt))
        #expect(cc.arguments == [.boolean(true), .variant(.objectPath(SecretPath.none))])

        // ChangeLock: s "".
        let change = try c.call(ServiceInterface.ChangeLock.self, .init(collection: SecretPath.login)).prompt
        try c.call(PromptInterface.Dismiss.self, on: change, NoArguments())
        let ch = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: change))
        #expect(ch.arguments == [.boolean(true), .variant(.string(""))])

        #expect(Set(try c.library.collections()) == [SecretPath.login, SecretPath.sessionCollection])
        #expect(!f.pinentryLogText.contains("GETPIN"), "dismissed prompts never ask")
    }

    /// The dialog stays open after Dismiss (pinentry cannot be recalled), but a password the
    /// user types after that changes nothing.
    @Test func aPasswordTypedAfterDismissUnlocksNothing() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 1 \(DaemonFixture.loginPassword)"])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try Self.lockedThenUnlock(c)
        try c.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        try c.call(PromptInterface.Dismiss.self, on: prompt, NoArguments())
        let completed = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: prompt))
        #expect(completed.arguments == [.boolean(true), .variant(Self.emptyPaths)])
        c.clearSignals()   // the lock's, announced long before Completed
        // An unlock would be announced: none comes while the pinentry answers (after 1 s) and
        // for long after, time enough for the key derivation had the answer been used.
        let unlocked = c.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service, timeout: 4) {
            $0.objectArgument == SecretPath.login
        }
        #expect(unlocked == nil, "the late password unlocked the collection")
        #expect(try c.isLocked(SecretPath.login), "the late password unlocked the collection")
        #expect(f.pinentryLogText.contains("GETPIN") && f.pinentryLogText.contains("BYE"), "log:\n\(f.pinentryLogText)")
    }

    @Test func promptBelongsToItsCallerAndRunsOnce() throws {
        let f = try DaemonFixture(pinentry: [DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        let other = try f.newClient()
        let prompt = try Self.lockedThenUnlock(c)
        expectDBusError(DBusError.Name.unknownMethod, DBusError.Name.accessDenied) {
            try other.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        }
        expectDBusError(DBusError.Name.unknownMethod, DBusError.Name.accessDenied) { try other.call(PromptInterface.Dismiss.self, on: prompt, NoArguments()) }

        // Two Prompt calls back to back: the second is refused while the first runs.
        let first = try DBusMessage.methodCall(destination: SecretServiceClient.busName, path: prompt,
                                               interface: PromptInterface.name, member: PromptInterface.Prompt.name, arguments: [.string("")])
        try c.connection.send(first)
        expectDBusError(SecretServiceError.Name.alreadyExists) { try c.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: "1234")) }
        let completed = try #require(c.waitForSignal(PromptInterface.Signal.completed, path: prompt, timeout: 30))
        #expect(completed.arguments == [.boolean(false), .variant(.objectPathArray([SecretPath.login]))])
        #expect(c.seen(PromptInterface.Signal.completed).isEmpty, "exactly one Completed")
        #expect(f.pinentryLogText.components(separatedBy: "GETPIN").count - 1 == 1)
    }

    @Test func createCollectionWithAPrompt() throws {
        let f = try DaemonFixture(pinentry: ["new collection pw"])
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let reply = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Prompted"), alias: "prompted"))
        #expect(reply.collection == SecretPath.none)
        let (dismissed, result) = try c.runPrompt(reply.prompt)
        #expect(!dismissed)
        let path = try #require(result.objectPath, "result must be an o: \(result)")
        #expect(path == "/org/freedesktop/secrets/collection/Prompted")
        #expect(try c.library.readAlias("prompted") == path)
        #expect((try c.library.collections()).contains(path))
        #expect(try c.library.collection(path).label == "Prompted")
        #expect(try c.isLocked(path) == false)
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionCreated, path: SecretPath.service)?.objectArgument == path)
        #expect(f.pinentryLogText.contains("SETREPEAT"), "a new password is confirmed")

        // The collection works and its password is the one typed.
        let session = try c.library.openSession()
        let item = try c.createItem(in: path, label: "x", attributes: ["in": "prompted"], secret: "y", session: session)
        _ = try c.library.lock([path])
        expectDBusError(SecretServiceError.Name.denied) { try c.library.unlock(path, password: SecureBytes("other"), session: session) }
        try c.library.unlock(path, password: SecureBytes("new collection pw"), session: session)
        #expect(try c.secretBytes(of: item, session: session) == Array("y".utf8))

        // The alias exists now: CreateCollection returns it at once, without a prompt.
        let again = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Other"), alias: "prompted"))
        #expect(again.collection == path && again.prompt == SecretPath.none)

        // Cancelled: o "/" and nothing created.
        try f.setPinentryScript(["CANCEL"])
        let cancelled = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Never"), alias: "")).prompt
        let outcome = try c.runPrompt(cancelled)
        #expect(outcome.dismissed)
        #expect(outcome.result == .objectPath(SecretPath.none))
        #expect(!(try c.library.collections()).contains { $0.rawValue.hasSuffix("/never") })
    }

    @Test func secretToolStoreCreatesTheDefaultCollectionThroughAPrompt() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // No default collection: delete login.
        try c.library.deleteCollection(SecretPath.login)
        #expect(try c.library.readAlias("default") == nil)
        try f.setPinentryScript(["fresh default pw"])
        try f.store(label: "first", ["after": "delete"], secret: Array("stored".utf8))
        let def = try #require(try c.library.readAlias("default"))
        #expect(try f.lookup(["after": "delete"]).stdout == "stored")
        #expect(try c.items(of: def).count == 1)
    }

    @Test func changeLockWithAPrompt() throws {
        let old = DaemonFixture.loginPassword
        let f = try DaemonFixture(pinentry: ["not the old one", "whatever", old, "brand new pw"])
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let item = try c.createItem(label: "c", attributes: ["change": "1"], secret: "still here", session: session)
        let prompt = try c.call(ServiceInterface.ChangeLock.self, .init(collection: SecretPath.login)).prompt
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(!dismissed)
        #expect(result == .string(""))
        #expect(f.pinentryLogText.contains("SETERROR"), "the wrong old password was reported")

        _ = try c.library.lock([SecretPath.login])
        expectDBusError(SecretServiceError.Name.denied) { try c.library.unlock(SecretPath.login, password: SecureBytes(old), session: session) }
        #expect(try c.isLocked(SecretPath.login))
        try c.library.unlock(SecretPath.login, password: SecureBytes("brand new pw"), session: session)
        #expect(try c.secretBytes(of: item, session: session) == Array("still here".utf8))

        // gnome-keyring's ChangeWithPrompt is the same.
        try f.setPinentryScript(["brand new pw", "third pw"])
        let viaGnome = try c.call(GnomeKeyringInterface.ChangeWithPrompt.self, .init(collection: SecretPath.login)).prompt
        #expect(try c.runPrompt(viaGnome).dismissed == false)
        _ = try c.library.lock([SecretPath.login])
        try c.library.unlock(SecretPath.login, password: SecureBytes("third pw"), session: session)
        #expect(try c.isLocked(SecretPath.login) == false)
    }

    @Test func oneUnlockPromptForSeveralCollections() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let work = try c.library.createCollection(label: "Work", password: SecureBytes("work pw"), session: session)
        _ = try c.library.lock([SecretPath.login, work])

        // Both passwords in one prompt.
        try f.setPinentryScript([DaemonFixture.loginPassword, "work pw"])
        var prompt = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login, work])).prompt
        var outcome = try c.runPrompt(prompt)
        #expect(!outcome.dismissed)
        #expect(outcome.result == .objectPathArray([SecretPath.login, work]))
        #expect(try c.isLocked(SecretPath.login) == false && c.isLocked(work) == false)

        // Cancelled at the second: the first stays unlocked and is reported.
        _ = try c.library.lock([SecretPath.login, work])
        try f.setPinentryScript([DaemonFixture.loginPassword, "CANCEL"])
        prompt = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login, work])).prompt
        outcome = try c.runPrompt(prompt)
        #expect(outcome.dismissed)
        #expect(outcome.result == .objectPathArray([SecretPath.login]))
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(try c.isLocked(work))

        // Mixed: an unlocked one is reported at once, only the locked one is prompted for.
        try f.setPinentryScript(["work pw"])
        let mixed = try c.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login, work]))
        #expect(mixed.unlocked == [SecretPath.login])
        outcome = try c.runPrompt(mixed.prompt)
        #expect(outcome.result == .objectPathArray([work]))
        #expect(f.pinentryLogText.contains("Work"), "the dialog names the keyring")
    }

    @Test func brokenPinentriesDismissThePrompt() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        for answer in ["EXIT", "FAIL", "TIMEOUT"] {
            try f.setPinentryScript([answer])
            let prompt = try Self.lockedThenUnlock(c)
            let outcome = try c.runPrompt(prompt)
            #expect(outcome.dismissed, "\(answer)")
            #expect(outcome.result == Self.emptyPaths, "\(answer)")
            #expect(try c.isLocked(SecretPath.login))
        }
        #expect(f.daemonIsRunning)
        try f.setPinentryScript([DaemonFixture.loginPassword])
        #expect(try c.runPrompt(try Self.lockedThenUnlock(c)).dismissed == false)
    }

    @Test func missingPinentryDismissesThePrompt() throws {
        let f = try DaemonFixture(pinentry: [DaemonFixture.loginPassword], pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        let c = f.client!
        let outcome = try c.runPrompt(try Self.lockedThenUnlock(c))
        #expect(outcome.dismissed)
        #expect(outcome.result == Self.emptyPaths)
        #expect(try c.isLocked(SecretPath.login))
        let create = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "X"), alias: ""))
        let created = try c.runPrompt(create.prompt)
        #expect(created.dismissed && created.result == .objectPath(SecretPath.none))
        #expect(f.pinentryLogText.isEmpty)
    }

    /// Passwords with Assuan's special characters and non-ASCII text reach the daemon intact.
    @Test func passwordsWithSpecialCharacters() throws {
        let password = "50% off: ü/ä \\ \"quoted\" %0A%25 end"
        let f = try DaemonFixture(password: password, pinentry: [password])
        defer { f.shutdown() }
        let c = f.client!
        let outcome = try c.runPrompt(try Self.lockedThenUnlock(c))
        #expect(!outcome.dismissed, "log:\n\(f.pinentryLogText)")
        #expect(try c.isLocked(SecretPath.login) == false)

        // A new collection's password typed the same way is the one the internal interface takes.
        let tricky = "ünïcødé 🔑 %%"
        try f.setPinentryScript([tricky])
        let create = try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Tricky"), alias: ""))
        let created = try #require(try c.runPrompt(create.prompt).result.objectPath)
        _ = try c.library.lock([created])
        try c.library.unlock(created, password: SecureBytes(tricky), session: try c.library.openSession())
        #expect(try c.isLocked(created) == false)
    }

    @Test func secretToolSearchUnlockRunsThePrompt() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        try f.store(label: "found", ["su": "1"], secret: Array("unlocked by search".utf8))
        _ = try c.library.lock([SecretPath.login])
        let locked = try f.secretTool(["search", "su", "1"])
        #expect(!locked.stdout.contains("unlocked by search"))
        try f.setPinentryScript([DaemonFixture.loginPassword])
        let result = try f.secretTool(["search", "--unlock", "su", "1"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("secret = unlocked by search"), "\(result.stdout)")
        #expect(try c.isLocked(SecretPath.login) == false)
    }
}
