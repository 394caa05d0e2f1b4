import DBusKit
import Foundation
import Testing

/// Prompts answered by FakePinentry (the daemon runs it with `--pinentry`; it answers GETPIN
/// from the fixture's script and logs what it was told).
@Suite(.timeLimit(.minutes(10)), .enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
struct PromptTests {
    static let emptyPaths = DBusValue.array(elementSignature: .objectPath, [])

    /// Locks login, asks to unlock `paths`; returns the prompt.
    static func lockedThenUnlock(_ c: SecretClient, _ paths: [ObjectPath] = [SS.login]) throws -> ObjectPath {
        try c.service("Lock", [.objectPathArray([SS.login])])
        #expect(try c.isLocked(SS.login))
        let reply = try c.service("Unlock", [.objectPathArray(paths)])
        #expect(reply[0] == emptyPaths, "nothing is unlocked before the prompt")
        let prompt = try #require(reply[1].objectPath)
        #expect(prompt.rawValue.hasPrefix("/org/freedesktop/secrets/prompt/"))
        return prompt
    }

    @Test func unlockAfterAWrongPassword() throws {
        let f = try DaemonFixture(pinentry: ["wrong password", DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let item = try c.quickItem(attributes: ["p": "1"], secret: "behind the prompt")
        let prompt = try Self.lockedThenUnlock(c, [SS.login])
        #expect(IntrospectionTests.interfaces(try c.introspect(prompt)).contains(SS.promptInterface))

        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(dismissed == false)
        #expect(result == .objectPathArray([SS.login]))
        #expect(result.signatureString == "ao")
        // Locked is already false when Completed arrives.
        #expect(try c.isLocked(SS.login) == false)
        #expect(try c.getSecret(item, session: try c.openDH()) == Array("behind the prompt".utf8))

        // The dialog said which keyring, and showed an error after the wrong password.
        let log = f.pinentryLogText
        #expect(log.components(separatedBy: "GETPIN").count - 1 == 2, "log:\n\(log)")
        #expect(log.contains("SETERROR"), "log:\n\(log)")
        #expect(log.contains("SETDESC") && log.contains("Login"), "log:\n\(log)")
        // Completed is unicast to the caller; the prompt is gone afterwards.
        #expect(watcher.seen("Completed").isEmpty)
        #expect(c.signals.withLock { $0 }.allSatisfy { $0.member != "Completed" })
        expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod) {
            try c.call(prompt, SS.promptInterface, "Prompt", [.string("")])
        }
        // Others heard about the unlock.
        #expect(watcher.waitForSignal("CollectionChanged", path: SS.service)?.objectArgument == SS.login)
    }

    @Test func unlockThroughAnItemPathAndSecretToolLookup() throws {
        let f = try DaemonFixture(pinentry: [DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        try f.store(label: "tool", ["lookup": "prompted"], secret: Array("prompted secret".utf8))
        let item = try #require(try c.items(of: SS.login).first)
        let prompt = try Self.lockedThenUnlock(c, [item])
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(!dismissed)
        #expect(result == .objectPathArray([item]))
        #expect(try c.isLocked(SS.login) == false)

        // secret-tool lookup on a locked item runs the unlock prompt itself.
        try c.service("Lock", [.objectPathArray([SS.login])])
        try f.setPinentryScript([DaemonFixture.loginPassword])
        let lookup = try f.lookup(["lookup": "prompted"])
        #expect(lookup.exitCode == 0, "\(lookup)")
        #expect(lookup.stdout == "prompted secret")
        #expect(try c.isLocked(SS.login) == false)
    }

    /// libsecret's store into a locked default collection: IsLocked, Unlock on the alias
    /// path, the prompt, then CreateItem again.
    @Test func secretToolStoreIntoALockedCollection() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        try c.service("Lock", [.objectPathArray([SS.login])])
        try f.setPinentryScript([DaemonFixture.loginPassword])
        try f.store(label: "while locked", ["sl": "1"], secret: Array("stored after unlock".utf8))
        #expect(try c.isLocked(SS.login) == false)
        #expect(try f.lookup(["sl": "1"]).stdout == "stored after unlock")

        // Cancelled: the store fails and nothing is stored.
        try c.service("Lock", [.objectPathArray([SS.login])])
        try f.setPinentryScript(["CANCEL"])
        let refused = try f.secretTool(["store", "--label=no", "sl", "2"], stdin: "never")
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(try c.searchItems(["sl": "2"]) == ([], []))
        #expect(try c.isLocked(SS.login))
    }

    @Test func unlockCancelled() throws {
        let f = try DaemonFixture(pinentry: ["CANCEL"])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try Self.lockedThenUnlock(c)
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(dismissed == true)
        #expect(result == Self.emptyPaths)
        #expect(try c.isLocked(SS.login))
        // An empty script cancels too.
        let again = try #require(try c.service("Unlock", [.objectPathArray([SS.login])])[1].objectPath)
        #expect(again != prompt, "a new prompt each time")
        let second = try c.runPrompt(again)
        #expect(second.dismissed && second.result == Self.emptyPaths)
        #expect(try c.isLocked(SS.login))
        #expect(f.daemonIsRunning)
    }

    @Test func dismissSendsTypedEmptyResults() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // Unlock: ao [].
        let unlock = try Self.lockedThenUnlock(c)
        try c.call(unlock, SS.promptInterface, "Dismiss")
        let u = try #require(c.waitForSignal("Completed", path: unlock))
        #expect(u.arguments == [.boolean(true), .variant(Self.emptyPaths)])
        #expect(try c.isLocked(SS.login))
        expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod) { try c.call(unlock, SS.promptInterface, "Dismiss") }

        // CreateCollection: o "/".
        let create = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Dismissed")]), .string("")])
        #expect(create[0] == .objectPath(SS.none))
        let createPrompt = try #require(create[1].objectPath)
        try c.call(createPrompt, SS.promptInterface, "Dismiss")
        let cc = try #require(c.waitForSignal("Completed", path: createPrompt))
        #expect(cc.arguments == [.boolean(true), .variant(.objectPath(SS.none))])

        // ChangeLock: s "".
        let change = try #require(try c.service("ChangeLock", [.objectPath(SS.login)]).first?.objectPath)
        try c.call(change, SS.promptInterface, "Dismiss")
        let ch = try #require(c.waitForSignal("Completed", path: change))
        #expect(ch.arguments == [.boolean(true), .variant(.string(""))])

        #expect(Set(try c.collections()) == [SS.login, SS.sessionCollection])
        #expect(!f.pinentryLogText.contains("GETPIN"), "dismissed prompts never ask")
    }

    /// The dialog stays open after Dismiss (pinentry cannot be recalled), but a password the
    /// user types after that changes nothing.
    @Test func aPasswordTypedAfterDismissUnlocksNothing() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 1 \(DaemonFixture.loginPassword)"])
        defer { f.shutdown() }
        let c = f.client!
        let prompt = try Self.lockedThenUnlock(c)
        try c.call(prompt, SS.promptInterface, "Prompt", [.string("")])
        try c.call(prompt, SS.promptInterface, "Dismiss")
        let completed = try #require(c.waitForSignal("Completed", path: prompt))
        #expect(completed.arguments == [.boolean(true), .variant(Self.emptyPaths)])
        // Wait until the fake pinentry has answered and exited.
        let deadline = Date().addingTimeInterval(10)
        while !f.pinentryLogText.contains("BYE") && Date() < deadline { usleep(50_000) }
        #expect(f.pinentryLogText.contains("GETPIN"))
        // Had the answer been used, the key derivation would end well within this.
        let settled = Date().addingTimeInterval(3)
        while try c.isLocked(SS.login), Date() < settled { usleep(100_000) }
        #expect(try c.isLocked(SS.login), "the late password unlocked the collection")
    }

    @Test func promptBelongsToItsCallerAndRunsOnce() throws {
        let f = try DaemonFixture(pinentry: [DaemonFixture.loginPassword])
        defer { f.shutdown() }
        let c = f.client!
        let other = try f.newClient()
        let prompt = try Self.lockedThenUnlock(c)
        expectDBusError(ErrorName.unknownMethod, ErrorName.accessDenied) {
            try other.call(prompt, SS.promptInterface, "Prompt", [.string("")])
        }
        expectDBusError(ErrorName.unknownMethod, ErrorName.accessDenied) { try other.call(prompt, SS.promptInterface, "Dismiss") }

        // Two Prompt calls back to back: the second is refused while the first runs.
        let first = try DBusMessage.methodCall(destination: DaemonFixture.busName, path: prompt,
                                               interface: SS.promptInterface, member: "Prompt", arguments: [.string("")])
        try c.connection.send(first)
        expectDBusError(ErrorName.alreadyExists) { try c.call(prompt, SS.promptInterface, "Prompt", [.string("1234")]) }
        let completed = try #require(c.waitForSignal("Completed", path: prompt, timeout: 30))
        #expect(completed.arguments == [.boolean(false), .variant(.objectPathArray([SS.login]))])
        #expect(c.seen("Completed").isEmpty, "exactly one Completed")
        #expect(f.pinentryLogText.components(separatedBy: "GETPIN").count - 1 == 1)
    }

    @Test func createCollectionWithAPrompt() throws {
        let f = try DaemonFixture(pinentry: ["new collection pw"])
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let reply = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Prompted")]),
                                                       .string("prompted")])
        #expect(reply[0] == .objectPath(SS.none))
        let prompt = try #require(reply[1].objectPath)
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(!dismissed)
        let path = try #require(result.objectPath, "result must be an o: \(result)")
        #expect(path == "/org/freedesktop/secrets/collection/prompted")
        #expect(try c.readAlias("prompted") == path)
        #expect((try c.collections()).contains(path))
        #expect(try c.get(path, SS.collectionInterface, "Label") == .string("Prompted"))
        #expect(try c.isLocked(path) == false)
        #expect(watcher.waitForSignal("CollectionCreated", path: SS.service)?.objectArgument == path)
        #expect(f.pinentryLogText.contains("SETREPEAT"), "a new password is confirmed")

        // The collection works and its password is the one typed.
        let session = try c.openDH()
        let item = try c.createItem(in: path, label: "x", attributes: ["in": "prompted"], secret: "y", session: session)
        try c.service("Lock", [.objectPathArray([path])])
        expectDBusError(ErrorName.denied) { try c.unlockWithMasterPassword(path, password: "other", session: session) }
        try c.unlockWithMasterPassword(path, password: "new collection pw", session: session)
        #expect(try c.getSecret(item, session: session) == Array("y".utf8))

        // The alias exists now: CreateCollection returns it at once, without a prompt.
        let again = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Other")]),
                                                       .string("prompted")])
        #expect(again == [.objectPath(path), .objectPath(SS.none)])

        // Cancelled: o "/" and nothing created.
        try f.setPinentryScript(["CANCEL"])
        let cancelled = try #require(try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Never")]),
                                                                         .string("")])[1].objectPath)
        let outcome = try c.runPrompt(cancelled)
        #expect(outcome.dismissed)
        #expect(outcome.result == .objectPath(SS.none))
        #expect(!(try c.collections()).contains { $0.rawValue.hasSuffix("/never") })
    }

    @Test func secretToolStoreCreatesTheDefaultCollectionThroughAPrompt() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        // No default collection: delete login.
        try c.call(SS.login, SS.collectionInterface, "Delete")
        #expect(try c.readAlias("default") == SS.none)
        try f.setPinentryScript(["fresh default pw"])
        try f.store(label: "first", ["after": "delete"], secret: Array("stored".utf8))
        let def = try c.readAlias("default")
        #expect(def != SS.none)
        #expect(try f.lookup(["after": "delete"]).stdout == "stored")
        #expect(try c.items(of: def).count == 1)
    }

    @Test func changeLockWithAPrompt() throws {
        let old = DaemonFixture.loginPassword
        let f = try DaemonFixture(pinentry: ["not the old one", "whatever", old, "brand new pw"])
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let item = try c.createItem(label: "c", attributes: ["change": "1"], secret: "still here", session: session)
        let prompt = try #require(try c.service("ChangeLock", [.objectPath(SS.login)]).first?.objectPath)
        let (dismissed, result) = try c.runPrompt(prompt)
        #expect(!dismissed)
        #expect(result == .string(""))
        #expect(f.pinentryLogText.contains("SETERROR"), "the wrong old password was reported")

        try c.service("Lock", [.objectPathArray([SS.login])])
        expectDBusError(ErrorName.denied) { try c.unlockWithMasterPassword(SS.login, password: old, session: session) }
        #expect(try c.isLocked(SS.login))
        try c.unlockWithMasterPassword(SS.login, password: "brand new pw", session: session)
        #expect(try c.getSecret(item, session: session) == Array("still here".utf8))

        // gnome-keyring's ChangeWithPrompt is the same.
        try f.setPinentryScript(["brand new pw", "third pw"])
        let viaGnome = try #require(try c.call(SS.service, SS.gnomeInterface, "ChangeWithPrompt", [.objectPath(SS.login)]).first?.objectPath)
        #expect(try c.runPrompt(viaGnome).dismissed == false)
        try c.service("Lock", [.objectPathArray([SS.login])])
        try c.unlockWithMasterPassword(SS.login, password: "third pw", session: session)
        #expect(try c.isLocked(SS.login) == false)
    }

    @Test func oneUnlockPromptForSeveralCollections() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let work = try c.createWithMasterPassword(label: "Work", password: "work pw", session: session)
        try c.service("Lock", [.objectPathArray([SS.login, work])])

        // Both passwords in one prompt.
        try f.setPinentryScript([DaemonFixture.loginPassword, "work pw"])
        var prompt = try #require(try c.service("Unlock", [.objectPathArray([SS.login, work])])[1].objectPath)
        var outcome = try c.runPrompt(prompt)
        #expect(!outcome.dismissed)
        #expect(outcome.result == .objectPathArray([SS.login, work]))
        #expect(try c.isLocked(SS.login) == false && c.isLocked(work) == false)

        // Cancelled at the second: the first stays unlocked and is reported.
        try c.service("Lock", [.objectPathArray([SS.login, work])])
        try f.setPinentryScript([DaemonFixture.loginPassword, "CANCEL"])
        prompt = try #require(try c.service("Unlock", [.objectPathArray([SS.login, work])])[1].objectPath)
        outcome = try c.runPrompt(prompt)
        #expect(outcome.dismissed)
        #expect(outcome.result == .objectPathArray([SS.login]))
        #expect(try c.isLocked(SS.login) == false)
        #expect(try c.isLocked(work))

        // Mixed: an unlocked one is reported at once, only the locked one is prompted for.
        try f.setPinentryScript(["work pw"])
        let mixed = try c.service("Unlock", [.objectPathArray([SS.login, work])])
        #expect(mixed[0] == .objectPathArray([SS.login]))
        outcome = try c.runPrompt(try #require(mixed[1].objectPath))
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
            #expect(try c.isLocked(SS.login))
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
        #expect(try c.isLocked(SS.login))
        let create = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("X")]), .string("")])
        let created = try c.runPrompt(try #require(create[1].objectPath))
        #expect(created.dismissed && created.result == .objectPath(SS.none))
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
        #expect(try c.isLocked(SS.login) == false)

        // A new collection's password typed the same way is the one the internal interface takes.
        let tricky = "ünïcødé 🔑 %%"
        try f.setPinentryScript([tricky])
        let create = try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .string("Tricky")]), .string("")])
        let createPrompt = try #require(create[1].objectPath)
        let created = try #require(try c.runPrompt(createPrompt).result.objectPath)
        try c.service("Lock", [.objectPathArray([created])])
        try c.unlockWithMasterPassword(created, password: tricky, session: try c.openDH())
        #expect(try c.isLocked(created) == false)
    }

    @Test func secretToolSearchUnlockRunsThePrompt() throws {
        let f = try DaemonFixture(pinentry: [])
        defer { f.shutdown() }
        let c = f.client!
        try f.store(label: "found", ["su": "1"], secret: Array("unlocked by search".utf8))
        try c.service("Lock", [.objectPathArray([SS.login])])
        let locked = try f.secretTool(["search", "su", "1"])
        #expect(!locked.stdout.contains("unlocked by search"))
        try f.setPinentryScript([DaemonFixture.loginPassword])
        let result = try f.secretTool(["search", "--unlock", "su", "1"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("secret = unlocked by search"), "\(result.stdout)")
        #expect(try c.isLocked(SS.login) == false)
    }
}
