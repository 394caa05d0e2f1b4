import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import Testing

/// Limits that keep one client from exhausting the daemon: sessions (recycled) and pending
/// prompts per client, one password dialog at a time, secret sizes checked before secure memory is used,
/// and exactly one path per collection.
@Suite(.timeLimit(.minutes(10))) struct HardeningTests {
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
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
        let kept = try c.openDH()
        let item = try c.createItem(label: "read often", attributes: ["h": "1"], secret: "served", session: kept)
        var opened: [ClientSession] = []
        for index in 0..<(Self.maxSessionsPerClient + 100) {
            let session = try c.openPlain()
            opened.append(session)
            #expect(try c.getSecret(item, session: session) == Array("served".utf8))
            if index % 100 == 0 { #expect(try c.getSecret(item, session: kept) == Array("served".utf8)) }
        }
        // The oldest idle sessions went; the one in use and the newest stayed.
        expectDBusError("org.freedesktop.Secret.Error.NoSession") { _ = try c.getSecret(item, session: opened[0]) }
        #expect(try c.getSecret(item, session: kept) == Array("served".utf8))
        #expect(try c.getSecret(item, session: opened.last!) == Array("served".utf8))
        #expect(f.daemonLog.contains("least recently used"), "\(f.daemonLog)")

        // Another client's sessions are not touched.
        let other = try f.newClient()
        let otherSession = try other.openDH()
        _ = try c.openPlain()
        #expect(try other.getSecret(item, session: otherSession) == Array("served".utf8))
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    @Test func pendingPromptsPerClientAreLimited() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        try c.service("Lock", [.objectPathArray([SS.login])])
        func unlockPrompt(_ client: SecretClient) throws -> ObjectPath {
            let reply = try client.service("Unlock", [.objectPathArray([SS.login])])
            let prompt = try #require(reply.last?.objectPath)
            #expect(prompt != SS.none)
            return prompt
        }
        var prompts = try (0..<Self.maxPrompts).map { _ in try unlockPrompt(c) }
        let error = expectDBusError(Self.limitsExceeded) { _ = try unlockPrompt(c) }
        #expect(error?.message.contains("\(Self.maxPrompts)") == true, "\(String(describing: error))")
        // Every call that makes a prompt is limited.
        expectDBusError(Self.limitsExceeded) {
            try c.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .variant(.string("Flood"))]), .string("")])
        }
        expectDBusError(Self.limitsExceeded) { try c.service("ChangeLock", [.objectPath(SS.login)]) }

        // Another client still gets one.
        let other = try f.newClient()
        _ = try unlockPrompt(other)

        // A dismissed prompt makes room again.
        try c.call(prompts.removeFirst(), SS.promptInterface, "Dismiss")
        #expect(c.waitForSignal("Completed", interface: SS.promptInterface) != nil)
        prompts.append(try unlockPrompt(c))
        expectDBusError(Self.limitsExceeded) { _ = try unlockPrompt(c) }
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
        #expect(try c.readAlias("default") == SS.login)
    }

    /// Two clients run a prompt at the same moment: the second dialog starts only after the
    /// first one ended (FakePinentry logs "PID" when it starts; the daemon says BYE at the end).
    @Test(.enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
    func dialogsRunOneAtATime() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 0.5 first password", "AFTER 0.5 second password"])
        defer { f.shutdown() }
        let clients = [f.client!, try f.newClient()]
        let prompts = try clients.enumerated().map { index, client in
            let reply = try client.service("CreateCollection",
                                           [.variantDictionary([SS.collectionLabel: .variant(.string("Serial \(index)"))]), .string("")])
            return try #require(reply.last?.objectPath)
        }
        for (client, prompt) in zip(clients, prompts) {
            try client.call(prompt, SS.promptInterface, "Prompt", [.string("")])
        }
        for (client, prompt) in zip(clients, prompts) {
            let completed = try #require(client.waitForSignal("Completed", path: prompt, timeout: 30), "log:\n\(f.daemonLog)")
            #expect(completed.arguments.first == .boolean(false))
        }
        let markers = f.pinentryLogText.split(separator: "\n").compactMap { line -> String? in
            if line.hasPrefix("PID") { return "PID" }
            return line.hasPrefix("BYE") ? "BYE" : nil
        }
        #expect(markers == ["PID", "BYE", "PID", "BYE"], "dialogs overlapped; pinentry log:\n\(f.pinentryLogText)")
    }

    /// A prompt dismissed while it waits behind another client's dialog never shows one.
    @Test(.enabled(if: DaemonFixture.fakePinentryPath != nil, "FakePinentry is not built"))
    func aPromptDismissedWhileWaitingShowsNoDialog() throws {
        let f = try DaemonFixture(pinentry: ["AFTER 1 first password", "second password"])
        defer { f.shutdown() }
        let first = f.client!
        let second = try f.newClient()
        func createPrompt(_ client: SecretClient, _ label: String) throws -> ObjectPath {
            let reply = try client.service("CreateCollection", [.variantDictionary([SS.collectionLabel: .variant(.string(label))]), .string("")])
            return try #require(reply.last?.objectPath)
        }
        let running = try createPrompt(first, "Running")
        let waiting = try createPrompt(second, "Waiting")
        try first.call(running, SS.promptInterface, "Prompt", [.string("")])
        try second.call(waiting, SS.promptInterface, "Prompt", [.string("")])
        try second.call(waiting, SS.promptInterface, "Dismiss")
        #expect(second.waitForSignal("Completed", path: waiting)?.arguments.first == .boolean(true))
        #expect(first.waitForSignal("Completed", path: running, timeout: 30)?.arguments.first == .boolean(false))
        // Give a wrongly queued second dialog time to show up.
        let settled = Date().addingTimeInterval(1)
        while Date() < settled, f.pinentryLogText.components(separatedBy: "PID").count < 3 { usleep(50_000) }
        #expect(f.pinentryLogText.components(separatedBy: "PID").count - 1 == 1, "log:\n\(f.pinentryLogText)")
        #expect(try first.collections().count == 3)
    }

    // MARK: Secret sizes

    @Test func oversizedSecretsAreRejectedBeforeSecureMemory() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let dh = try c.openDH()
        let plain = try c.openPlain()
        func create(_ secret: DBusValue) throws {
            try c.call(SS.login, SS.collectionInterface, "CreateItem",
                       [.variantDictionary([SS.itemLabel: .string("huge")]), secret, .boolean(false)])
        }
        // Refused as the message is read, before any copy: 256 KiB plus one block of padding.
        let limit = "larger than the 262160 bytes allowed"
        for size in [3 << 20, 5 << 20] {
            let huge = [UInt8](repeating: 0x41, count: size)
            // (Too big for this process's secure memory to encrypt: random bytes stand in for
            // the DH ciphertext; the daemon must refuse them by size alone.)
            let secrets: [DBusValue] = [
                try c.encode(huge, session: plain),
                .structure([.objectPath(dh.path), .bytes(Random.bytes(16)), .bytes(huge), .string("text/plain")]),
            ]
            for secret in secrets {
                let error = expectDBusError(ErrorName.invalidArgs) { try create(secret) }
                #expect(error?.message.contains(limit) == true, "\(size) bytes: \(String(describing: error))")
            }
            // Also as the new secret of an item, and as a master password.
            let error = expectDBusError(ErrorName.invalidArgs) {
                try c.call(SS.service, SS.gnomeInterface, "CreateWithMasterPassword",
                           [.variantDictionary([SS.collectionLabel: .string("Huge")]), try c.encode(huge, session: plain)])
            }
            #expect(error?.message.contains(limit) == true, "\(String(describing: error))")
        }
        // A content type over the limit: InvalidArgs as well.
        let longType = String(repeating: "t", count: 129)
        let typeError = expectDBusError(ErrorName.invalidArgs) {
            try create(try c.encode(Array("x".utf8), contentType: longType, session: dh))
        }
        #expect(typeError?.message.contains("content types") == true, "\(String(describing: typeError))")

        // The largest allowed secret and a normal one still work, in both sessions.
        let largest = [UInt8](repeating: 0x42, count: 256 * 1024)
        let big = try c.createItem(label: "largest", attributes: ["size": "max"], secret: largest, session: dh)
        #expect(try c.getSecret(big, session: plain) == largest)
        let item = try c.createItem(label: "normal", attributes: ["size": "small"], secret: "after the flood", session: plain)
        #expect(try c.getSecret(item, session: dh) == Array("after the flood".utf8))
        try f.store(label: "tool", ["tool": "1"], secret: Array("stored".utf8))
        #expect(try f.lookup(["tool": "1"]).stdout == "stored")
        #expect(f.daemonIsRunning, "cofferd died; log:\n\(f.daemonLog)")
    }

    // MARK: Canonical paths

    @Test func collectionsHaveOnlyTheirCanonicalPath() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        let canonical: ObjectPath = "/org/freedesktop/secrets/collection/my_5fkeys"
        #expect(try c.createWithMasterPassword(label: "My Keys", password: "pw", session: session) == canonical)
        let item = try c.createItem(in: canonical, label: "k", attributes: ["canon": "1"], secret: "s", session: session)
        #expect(try c.get(canonical, SS.collectionInterface, "Label") == .string("My Keys"))
        try c.service("SetAlias", [.string("keys"), .objectPath(canonical)])
        #expect(try c.get("/org/freedesktop/secrets/aliases/keys", SS.collectionInterface, "Label") == .string("My Keys"))

        let itemNumber = try #require(item.lastElement)
        let spellings: [ObjectPath] = [
            "/org/freedesktop/secrets/collection/my_5Fkeys",       // upper-case hex
            "/org/freedesktop/secrets/collection/_6dy_5fkeys",     // an escaped letter
            "/org/freedesktop/secrets/collection/l_6fgin",
            "/org/freedesktop/secrets/collection/login_",          // a bare "_" is "_5f"
            "/org/freedesktop/secrets/aliases/_6beys",
            "/org/freedesktop/secrets/aliases/d_65fault",
        ]
        for path in spellings {
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                _ = try c.getAll(path, SS.collectionInterface)
            }
            let itemPath = try ObjectPath(path.rawValue + "/" + itemNumber)
            expectDBusError(ErrorName.unknownObject, ErrorName.unknownMethod, ErrorName.noSuchObject) {
                _ = try c.getSecret(itemPath, session: session)
            }
            expectDBusError(ErrorName.noSuchObject) {
                try c.service("SetAlias", [.string("other"), .objectPath(path)])
            }
            // Lock and Unlock skip what they cannot resolve.
            let locked = try c.service("Lock", [.objectPathArray([path])])
            #expect(locked.first == .objectPathArray([]), "\(path): \(locked)")
            let unlocked = try c.service("Unlock", [.objectPathArray([path])])
            #expect(unlocked == [.objectPathArray([]), .objectPath(SS.none)], "\(path): \(unlocked)")
        }
        #expect(try c.isLocked(canonical) == false)
        #expect(try c.isLocked(SS.login) == false)
        #expect(try c.getSecret(item, session: session) == Array("s".utf8))
        #expect(try c.readAlias("other") == SS.none)
    }
}
