import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Limits that keep one client from exhausting the daemon: sessions (recycled) and pending
/// prompts per client, one password dialog at a time, secret sizes checked before secure memory is used,
/// and exactly one path per collection.
@Suite(.timeLimit(.minutes(10))) struct HardeningTests {
    static let maxSessionsPerClient = 1024
    static let maxPrompts = 8

    // MARK: Sessions and prompts per client

    /// A client that opens a session per read and never closes one (SecretStorage's
    /// `Item.get_secret()` does) is always served: past its limit, its least recently used
    /// sessions close, and a session it keeps using stays.
    @Test func aClientThatNeverClosesSessionsIsServed() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let kept = try c.library.openSession()
        let item = try c.createItem(label: "read often", attributes: ["h": "1"], secret: "served", session: kept)
        var opened: [ClientSession] = []
        for index in 0..<(Self.maxSessionsPerClient + 100) {
            let session = try c.library.openSession(.plain)
            opened.append(session)
            #expect(try c.secretBytes(of: item, session: session) == Array("served".utf8))
            if index % 100 == 0 { #expect(try c.secretBytes(of: item, session: kept) == Array("served".utf8)) }
        }
        // The oldest idle sessions went; the one in use and the newest stayed.
        expectDBusError(SecretServiceError.Name.noSession) { _ = try c.secretBytes(of: item, session: opened[0]) }
        #expect(try c.secretBytes(of: item, session: kept) == Array("served".utf8))
        #expect(try c.secretBytes(of: item, session: opened.last!) == Array("served".utf8))
        #expect(eventually { f.daemonLog.contains("least recently used") }, "\(f.daemonLog)")

        // Another client's sessions are not touched.
        let other = try f.newClient()
        let otherSession = try other.library.openSession()
        _ = try c.library.openSession(.plain)
        #expect(try other.secretBytes(of: item, session: otherSession) == Array("served".utf8))
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    @Test func pendingPromptsPerClientAreLimited() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        _ = try c.library.lock([SecretPath.login])
        func unlockPrompt(_ client: TestClient) throws -> ObjectPath {
            let prompt = try client.call(ServiceInterface.Unlock.self, .init(objects: [SecretPath.login])).prompt
            #expect(prompt != SecretPath.none)
            return prompt
        }
        var prompts = try (0..<Self.maxPrompts).map { _ in try unlockPrompt(c) }
        let error = expectDBusError(SecretServiceError.Name.limitsExceeded) { _ = try unlockPrompt(c) }
        #expect(error?.message.contains("\(Self.maxPrompts)") == true, "\(String(describing: error))")
        // Every call that makes a prompt is limited.
        expectDBusError(SecretServiceError.Name.limitsExceeded) {
            try c.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Flood"), alias: ""))
        }
        expectDBusError(SecretServiceError.Name.limitsExceeded) { try c.call(ServiceInterface.ChangeLock.self, .init(collection: SecretPath.login)) }

        // Another client still gets one.
        let other = try f.newClient()
        _ = try unlockPrompt(other)

        // A dismissed prompt makes room again.
        try c.call(PromptInterface.Dismiss.self, on: prompts.removeFirst(), NoArguments())
        #expect(c.waitForSignal(PromptInterface.Signal.completed, interface: PromptInterface.name) != nil)
        prompts.append(try unlockPrompt(c))
        expectDBusError(SecretServiceError.Name.limitsExceeded) { _ = try unlockPrompt(c) }
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
        #expect(try c.library.readAlias("default") == SecretPath.login)
    }

    /// Two clients run a prompt at the same moment: the second dialog starts only after the
    /// first one ended (FakePinentry logs "PID" when it starts; the daemon says BYE at the end).
    @Test(.enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
    func dialogsRunOneAtATime() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 0.5 first password", "AFTER 0.5 second password"])
        defer { f.shutdown() }
        let clients = [f.client!, try f.newClient()]
        let prompts = try clients.enumerated().map { index, client in
            try client.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: "Serial \(index)"), alias: "")).prompt
        }
        for (client, prompt) in zip(clients, prompts) {
            try client.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: ""))
        }
        for (client, prompt) in zip(clients, prompts) {
            let completed = try #require(client.waitForSignal(PromptInterface.Signal.completed, path: prompt, timeout: 30), "log:\n\(f.daemonLog)")
            #expect(completed.arguments.first == .boolean(false))
        }
        let markers = f.pinentryLogText.split(separator: "\n").compactMap { line -> String? in
            if line.hasPrefix("PID") { return "PID" }
            return line.hasPrefix("BYE") ? "BYE" : nil
        }
        #expect(markers == ["PID", "BYE", "PID", "BYE"], "dialogs overlapped; pinentry log:\n\(f.pinentryLogText)")
    }

    /// A prompt dismissed while it waits behind another client's dialog never shows one: the
    /// next dialog after the running one is a third prompt's.
    @Test(.enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
    func aPromptDismissedWhileWaitingShowsNoDialog() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 1 first password", "third password"])
        defer { f.shutdown() }
        let first = f.client!
        let second = try f.newClient()
        func createPrompt(_ client: TestClient, _ label: String) throws -> ObjectPath {
            try client.call(ServiceInterface.CreateCollection.self, .init(properties: .init(label: label), alias: "")).prompt
        }
        let running = try createPrompt(first, "Running")
        let waiting = try createPrompt(second, "Waiting")
        try first.call(PromptInterface.Prompt.self, on: running, .init(windowID: ""))
        try second.call(PromptInterface.Prompt.self, on: waiting, .init(windowID: ""))
        try second.call(PromptInterface.Dismiss.self, on: waiting, NoArguments())
        #expect(second.waitForSignal(PromptInterface.Signal.completed, path: waiting)?.arguments.first == .boolean(true))
        #expect(first.waitForSignal(PromptInterface.Signal.completed, path: running, timeout: 30)?.arguments.first == .boolean(false))
        // Dialogs run one at a time, in order: a wrongly queued second dialog would come before
        // a third prompt's and take its answer.
        let third = try createPrompt(first, "Third")
        let (dismissed, made) = try first.runPrompt(third)
        #expect(!dismissed, "log:\n\(f.pinentryLogText)")
        #expect(f.pinentryLogText.components(separatedBy: "PID").count - 1 == 2, "log:\n\(f.pinentryLogText)")
        let madeByThird = try #require(made.objectPath)
        #expect(Set(try first.library.collections()) == [SecretPath.login, SecretPath.sessionCollection,
                                                         SecretPath.collection(named: "Running"), madeByThird])
    }

    // MARK: Secret sizes

    @Test func oversizedSecretsAreRejectedBeforeSecureMemory() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let dh = try c.library.openSession()
        let plain = try c.library.openSession(.plain)
        func create(_ secret: DBusValue) throws {
            try c.call(CollectionInterface.CreateItem.self, on: SecretPath.login,
                       arguments: [.variantDictionary([ItemProperties.labelKey: .string("huge")]), secret, .boolean(false)])
        }
        // Refused as the message is read, before any copy: 256 KiB plus one block of padding.
        let limit = "larger than the 262160 bytes allowed"
        for size in [3 << 20, 5 << 20] {
            let huge = [UInt8](repeating: 0x41, count: size)
            // (Too big for this process's secure memory: built by hand, and for DH the bytes
            // stand in for a ciphertext; the daemon must refuse them by size alone.)
            let plainSecret = DBusValue.structure([.objectPath(plain.path), .bytes([]), .bytes(huge), .string("text/plain")])
            let secrets: [DBusValue] = [
                plainSecret,
                .structure([.objectPath(dh.path), .bytes([UInt8](repeating: 7, count: 16)), .bytes(huge), .string("text/plain")]),
            ]
            for secret in secrets {
                let error = expectDBusError(DBusError.Name.invalidArgs) { try create(secret) }
                #expect(error?.message.contains(limit) == true, "\(size) bytes: \(String(describing: error))")
            }
            // Also as the new secret of an item, and as a master password.
            let error = expectDBusError(DBusError.Name.invalidArgs) {
                try c.call(GnomeKeyringInterface.CreateWithMasterPassword.self, on: SecretPath.service,
                           arguments: [.variantDictionary([CollectionProperties.labelKey: .string("Huge")]), plainSecret])
            }
            #expect(error?.message.contains(limit) == true, "\(String(describing: error))")
        }
        // A content type over the limit: InvalidArgs as well.
        let longType = String(repeating: "t", count: 129)
        let typeError = expectDBusError(DBusError.Name.invalidArgs) {
            try create(try dh.encode(SecureBytes("x"), contentType: longType).dbusValue)
        }
        #expect(typeError?.message.contains("content types") == true, "\(String(describing: typeError))")

        // The largest allowed secret and a normal one still work, in both sessions.
        let largest = [UInt8](repeating: 0x42, count: 256 * 1024)
        let big = try c.createItem(label: "largest", attributes: ["size": "max"], secret: largest, session: dh)
        #expect(try c.secretBytes(of: big, session: plain) == largest)
        let item = try c.createItem(label: "normal", attributes: ["size": "small"], secret: "after the flood", session: plain)
        #expect(try c.secretBytes(of: item, session: dh) == Array("after the flood".utf8))
        try f.store(label: "tool", ["tool": "1"], secret: Array("stored".utf8))
        #expect(try f.lookup(["tool": "1"]).stdout == "stored")
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    // MARK: Canonical paths

    @Test func collectionsHaveOnlyTheirCanonicalPath() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let canonical: ObjectPath = "/org/freedesktop/secrets/collection/My_5fKeys"
        #expect(try c.library.createCollection(label: "My Keys", password: SecureBytes("pw"), session: session) == canonical)
        let item = try c.createItem(in: canonical, label: "k", attributes: ["canon": "1"], secret: "s", session: session)
        #expect(try c.library.collection(canonical).label == "My Keys")
        try c.library.setAlias("keys", to: canonical)
        #expect(try c.library.collection(SecretPath.alias("keys")).label == "My Keys")

        let itemNumber = try #require(item.lastElement)
        let spellings: [ObjectPath] = [
            "/org/freedesktop/secrets/collection/My_5FKeys",       // upper-case hex
            "/org/freedesktop/secrets/collection/_4dy_5fKeys",     // an escaped letter
            "/org/freedesktop/secrets/collection/l_6fgin",
            "/org/freedesktop/secrets/collection/login_",          // a bare "_" is "_5f"
            "/org/freedesktop/secrets/aliases/_6beys",
            "/org/freedesktop/secrets/aliases/d_65fault",
        ]
        for path in spellings {
            expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod, SecretServiceError.Name.noSuchObject) {
                _ = try c.library.properties(of: CollectionInterface.name, on: path)
            }
            let itemPath = try ObjectPath(path.rawValue + "/" + itemNumber)
            expectDBusError(DBusError.Name.unknownObject, DBusError.Name.unknownMethod, SecretServiceError.Name.noSuchObject) {
                _ = try c.secretBytes(of: itemPath, session: session)
            }
            expectDBusError(SecretServiceError.Name.noSuchObject) {
                try c.library.setAlias("other", to: path)
            }
            // Lock and Unlock skip what they cannot resolve.
            #expect(try c.library.lock([path]) == [], "\(path)")
            let unlocked = try c.call(ServiceInterface.Unlock.self, .init(objects: [path]))
            #expect(unlocked.unlocked.isEmpty && unlocked.prompt == SecretPath.none, "\(path): \(unlocked)")
        }
        #expect(try c.isLocked(canonical) == false)
        #expect(try c.isLocked(SecretPath.login) == false)
        #expect(try c.secretBytes(of: item, session: session) == Array("s".utf8))
        #expect(try c.library.readAlias("other") == nil)
    }
}
