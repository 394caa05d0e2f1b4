import CofferCore
import CofferCrypto
import DBusKit
import SecretService
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// The prompts' logic, in process: a scripted `PasswordAsker` answers, collections derive
/// keys with the fast test parameters, and the client library drives the server. (PromptTests
/// check the same flows end to end, through cofferd and a pinentry.)
@Suite(.timeLimit(.minutes(5))) struct PromptLogicTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }
    static func password(_ text: String) throws -> PasswordAnswer { .password(try bytes(text)) }

    /// A server with collection "Work" (password "right"), locked.
    static func lockedWork(answers: [PasswordAnswer]) throws -> (InProcessServer, ObjectPath) {
        Crypto.initialize()
        let server = try InProcessServer(store: true, answers: answers)
        let id = try server.keychain.createCollection(label: "Work", password: try bytes("right"))
        try server.keychain.lock(id)
        return (server, SecretPath.collection(id))
    }

    @Test func unlockAsksAgainAfterAWrongPasswordAndSaysSo() throws {
        let (server, work) = try Self.lockedWork(answers: [try Self.password("wrong"), try Self.password("right")])
        defer { server.stop() }
        #expect(try server.client.unlock([work]) == [work])
        #expect(try !server.client.collection(work).isLocked)
        let asked = server.passwords.requests
        #expect(asked.count == 2)
        #expect(asked[0].title == "Unlock Keyring" && asked[0].description.contains("'Work'") && asked[0].error == nil)
        #expect(asked[1].error == "The unlock password was incorrect. After wrong passwords, the next is checked only 1 second from now.")
    }

    @Test func aCancelledDialogDismissesThePromptAndUnlocksNothing() throws {
        let (server, work) = try Self.lockedWork(answers: [.cancelled])
        defer { server.stop() }
        #expect(throws: PromptError.dismissed) { try server.client.unlock([work]) }
        #expect(try server.client.collection(work).isLocked)
    }

    @Test func noDialogAvailableDismissesWithoutAsking() throws {
        let (server, work) = try Self.lockedWork(answers: [.unavailable("no display")])
        defer { server.stop() }
        #expect(throws: PromptError.dismissed) { try server.client.unlock([work]) }
        #expect(try server.client.collection(work).isLocked)
    }

    /// A prompt is shown once; a second Prompt call is refused, and only its owner may use it.
    @Test func aPromptRunsOnceAndOnlyForItsClient() throws {
        let (server, work) = try Self.lockedWork(answers: [try Self.password("right")])
        defer { server.stop() }
        let prompt = try server.call(ServiceInterface.Unlock.self, on: SecretPath.service, .init(objects: [work])).prompt
        let stranger = SecretServiceClient(connection: try DBusConnection(address: server.bus.address), destination: server.name)
        defer { stranger.close() }
        #expect(throws: DBusError.self) { try stranger.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: "")) }
        let result = try server.client.complete(prompt: prompt)
        #expect(result == .objectPathArray([work]))
        #expect(throws: DBusError.self) { try server.call(PromptInterface.Prompt.self, on: prompt, .init(windowID: "")) }
    }

    @Test func createCollectionAsksForANewPasswordTwice() throws {
        Crypto.initialize()
        let server = try InProcessServer(store: true, answers: [try Self.password("fresh")])
        defer { server.stop() }
        let made = try server.client.createCollection(label: "Travel", alias: "trips")
        #expect(try server.client.collection(made).label == "Travel")
        #expect(try server.client.readAlias("trips") == made)
        let asked = server.passwords.requests
        #expect(asked.count == 1 && asked[0].confirm && asked[0].description.contains("'Travel'"))
        // The password asked for is the collection's.
        let id = try #require(SecretPath.parse(made).flatMap { if case .collection(let name) = $0 { CollectionID(name) } else { nil } })
        try server.keychain.lock(id)
        #expect(throws: CofferError.authenticationFailed) { try server.keychain.unlock(id, password: try Self.bytes("other")) }
        let fresh = try Self.bytes("fresh")
        try Keychain.waitingOutThrottle { () throws(CofferError) in try server.keychain.unlock(id, password: fresh) }
    }

    @Test func changePasswordRetriesAWrongOriginal() throws {
        let (server, work) = try Self.lockedWork(answers: [
            try Self.password("wrong"), try Self.password("new"),
            try Self.password("right"), try Self.password("new"),
        ])
        defer { server.stop() }
        try server.client.changePassword(of: work)
        let asked = server.passwords.requests
        #expect(asked.count == 4)
        #expect(asked[2].error == "The original password was incorrect. After wrong passwords, the next is checked only 1 second from now.")
        #expect(asked[1].confirm && asked[3].confirm)
        let id = CollectionID("Work")!
        #expect(throws: CofferError.authenticationFailed) { try server.keychain.unlock(id, password: try Self.bytes("right")) }
        let new = try Self.bytes("new")
        try Keychain.waitingOutThrottle { () throws(CofferError) in try server.keychain.unlock(id, password: new) }
    }
}

/// CreateCollection's properties, as clients send them.
@Suite(.timeLimit(.minutes(5))) struct CreateCollectionPropertyTests {
    @Test func aLabelSentAsTheItemLabelProperty() throws {
        Crypto.initialize()
        let server = try InProcessServer(store: true, answers: [try PromptLogicTests.password("pw")])
        defer { server.stop() }
        let properties = try CollectionProperties(dbusValue: .variantDictionary(
            [ItemProperties.labelKey: .string("From Rust")]))
        let reply = try server.call(ServiceInterface.CreateCollection.self, on: SecretPath.service,
                                    .init(properties: properties, alias: ""))
        let made = try server.client.complete(prompt: reply.prompt)
        #expect(try server.client.collection(try ObjectPath(dbusValue: made)).label == "From Rust")
        #expect(throws: DBusError.self) {
            try CollectionProperties(dbusValue: .variantDictionary([ItemProperties.labelKey: .uint32(1)]))
        }
    }
}

/// CreateItem in a locked collection: a prompt unlocks it, then the item is stored (as oo7).
@Suite(.timeLimit(.minutes(5))) struct CreateItemWhileLockedTests {
    @Test func thePromptUnlocksThenStores() throws {
        let (server, work) = try PromptLogicTests.lockedWork(answers: [try PromptLogicTests.password("right")])
        defer { server.stop() }
        let session = try server.client.openSession()
        let item = try server.client.createItem(in: work, label: "late", attributes: ["k": "v"],
                                                secret: try PromptLogicTests.bytes("stored after unlock"), session: session)
        #expect(item != SecretPath.none && item.isInside(work))
        #expect(try !server.client.collection(work).isLocked)
        #expect(try server.client.secret(of: item, session: session).bytes == (try PromptLogicTests.bytes("stored after unlock")))
        #expect(server.passwords.requests.count == 1)
    }

    @Test func dismissedItStoresNothing() throws {
        let (server, work) = try PromptLogicTests.lockedWork(answers: [.cancelled])
        defer { server.stop() }
        let session = try server.client.openSession()
        #expect(throws: PromptError.dismissed) {
            try server.client.createItem(in: work, label: "late", attributes: ["k": "v"],
                                         secret: try PromptLogicTests.bytes("never"), session: session)
        }
        #expect(try server.client.collection(work).isLocked)
        #expect(try server.keychain.info(CollectionID("Work")!).itemCount == 0)
    }
}
