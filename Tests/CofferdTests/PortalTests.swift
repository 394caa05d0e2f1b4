import CofferCrypto
import CofferTestSupport
import DBusKit
import Dispatch
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import SystemKit
import Testing

/// The Secret portal's backend (`org.freedesktop.impl.portal.Secret`) of the real cofferd,
/// called as xdg-desktop-portal calls it: by the owner of `org.freedesktop.portal.Desktop`,
/// with an application id and a pipe's write end to receive the application's secret.
@Suite(.timeLimit(.minutes(5))) struct PortalTests {
    /// This test process stands in for xdg-desktop-portal: cofferd is told it may.
    static let frontend = ["--portal-frontend", Executables.thisProcess]
    typealias RetrieveSecret = PortalSecretInterface.RetrieveSecret

    /// What one RetrieveSecret call gave: its reply (or error), and what came through the pipe.
    struct Retrieval {
        let reply: Result<RetrieveSecret.Output, any Error>
        let pipe: PipeContents

        var response: UInt32? { try? reply.get().response }
        var error: DBusError? {
            if case .failure(let error) = reply { return error as? DBusError }
            return nil
        }
    }

    /// A client that owns xdg-desktop-portal's bus name, as xdg-desktop-portal does.
    static func portalFrontend(_ f: DaemonFixture) throws -> TestClient {
        let portal = try f.newClient()
        try #require(try portal.connection.requestName(PortalSecretInterface.frontendBusName, flags: .doNotQueue) == .primaryOwner)
        return portal
    }

    /// Calls RetrieveSecret as `caller` for `appID` with a fresh pipe's write end (or with
    /// `descriptor` of `pipe` instead), then reads the pipe until every write end is closed.
    static func retrieve(_ appID: String, as caller: TestClient) throws -> Retrieval {
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let writeEnd = UnixFileDescriptor(adopting: pipe.writeEnd)
        let reply = Result { () throws -> RetrieveSecret.Output in
            try caller.connection.call(RetrieveSecret.self, destination: SecretServiceClient.busName, path: PortalSecretInterface.path,
                                       .init(handle: "/org/freedesktop/portal/desktop/request/1_1/t", appID: appID, fd: writeEnd,
                                             options: ["token": DBusVariant(.string("t"))]))
        }
        writeEnd.close()
        return Retrieval(reply: reply, pipe: try pipe.readEnd.readUntilEnd(timeout: 10))
    }

    /// Expects a secret: response 0, 64 bytes, and the pipe closed after them.
    @discardableResult
    static func expectSecret(_ retrieval: Retrieval, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
        #expect(retrieval.response == PortalSecretInterface.Response.success.rawValue, "\(retrieval.reply)", sourceLocation: sourceLocation)
        #expect(retrieval.pipe.bytes.count == 64, "\(retrieval.pipe)", sourceLocation: sourceLocation)
        #expect(retrieval.pipe.reachedEnd, "cofferd kept its copy of the write end open", sourceLocation: sourceLocation)
        return retrieval.pipe.bytes
    }

    /// The attributes of the item holding `appID`'s secret.
    static func itemAttributes(_ appID: String) -> [String: String] {
        ["app_id": appID, "xdg:schema": "org.freedesktop.portal.Secret"]
    }

    @Test func eachApplicationGetsItsOwnSecretTheSameEveryTimeAlsoAfterARestart() throws {
        let f = try DaemonFixture(daemonOptions: Self.frontend)
        defer { f.shutdown() }
        try f.grant(rights: ["--read", "--change"])   // a grant to the whole collection changes nothing for application keys
        var portal = try Self.portalFrontend(f)

        let first = Self.expectSecret(try Self.retrieve("org.example.First", as: portal))
        #expect(Self.expectSecret(try Self.retrieve("org.example.First", as: portal)) == first)
        let second = Self.expectSecret(try Self.retrieve("org.example.Second", as: portal))
        #expect(second != first)
        #expect(Set(first).count > 8, "64 random bytes, not a constant")

        // Kept as an item of the default collection, labelled for the application.
        let c = f.client!
        let items = try c.library.search(Self.itemAttributes("org.example.First"))
        #expect(items.unlocked.count == 1 && items.locked.isEmpty, "\(items)")
        let item = try #require(items.unlocked.first)
        #expect(item.parent == SecretPath.login)
        #expect(try c.library.property(ItemInterface.Property.label, of: ItemInterface.name, on: item) == .string("Application key for org.example.First"))
        // Only the portal hands it out: no caller of the Secret Service reads, changes or deletes it.
        let read = expectDBusError(DBusError.Name.accessDenied) { _ = try c.secretBytes(of: item, session: try c.library.openSession()) }
        #expect(read?.message.contains("sandboxed application's key") == true, "\(String(describing: read))")
        _ = expectDBusError(DBusError.Name.accessDenied) {
            try c.library.setProperty(ItemInterface.Property.label, of: ItemInterface.name, on: item, to: .string("mine now"))
        }
        _ = expectDBusError(DBusError.Name.accessDenied) { try c.library.deleteItem(item) }
        _ = expectDBusError(DBusError.Name.accessDenied) {
            _ = try c.createItem(label: "Application key for org.example.First", attributes: Self.itemAttributes("org.example.First"),
                                 secret: "planted", session: try c.library.openSession(), replace: true)
        }
        #expect(Self.expectSecret(try Self.retrieve("org.example.First", as: portal)) == first)

        // Two first requests of one application at once make one secret.
        let results = ResultSlots(Array(repeating: Retrieval?.none, count: 2))
        let frontend = portal
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            results.set(index, try? Self.retrieve("org.example.Twice", as: frontend))
        }
        let twice = results.values.compactMap { $0 }.map { Self.expectSecret($0) }
        #expect(twice.count == 2 && twice[0] == twice[1], "two concurrent first requests got different secrets")
        #expect(try c.library.search(Self.itemAttributes("org.example.Twice")).unlocked.count == 1)

        // One line per request, never the secret.
        let log = f.daemonLog
        #expect(log.contains("secret portal: org.example.First: made a new secret"), "log:\n\(log)")
        #expect(log.contains("secret portal: org.example.First: found its secret"), "log:\n\(log)")
        #expect(!log.contains(first.map { String(format: "%02x", $0) }.joined()), "log:\n\(log)")

        // The same bytes from the next cofferd.
        f.stopDaemon()
        try Self.plantItem(for: "org.example.Planted", secret: "known to the planter", in: f)
        try f.startDaemon(unlock: true)
        portal = try Self.portalFrontend(f)
        #expect(Self.expectSecret(try Self.retrieve("org.example.First", as: portal)) == first)
        #expect(Self.expectSecret(try Self.retrieve("org.example.Second", as: portal)) == second)

        // An item with an application's attributes that another program made is not its secret.
        let planted = Self.expectSecret(try Self.retrieve("org.example.Planted", as: portal))
        #expect(planted != Array("known to the planter".utf8))
        #expect(Self.expectSecret(try Self.retrieve("org.example.Planted", as: portal)) == planted)
        #expect(eventually { f.daemonLog.contains("org.example.Planted: passed over 1 item(s) with its attributes that it did not make (through the portal)") },
                "log:\n\(f.daemonLog)")
    }

    /// Adds, with `coffer add` on the store itself (cofferd stopped, so `coffer` records itself
    /// as the creator), an item with the attributes of `appID`'s secret.
    static func plantItem(for appID: String, secret: String, in f: DaemonFixture) throws {
        let coffer = try #require(Executables.built("coffer"), "coffer is not built next to the tests")
        let add = try ChildProcess(coffer, arguments: ["add", "--data-dir", f.dataDir, "--password-stdin", "--label", "planted"]
                                       + itemAttributes(appID).sorted { $0.key < $1.key }.flatMap { ["--attr", "\($0.key)=\($0.value)"] },
                                   environment: f.environment(), stdin: Array("\(DaemonFixture.loginPassword)\n\(secret)".utf8))
        let result = add.wait(timeout: 30)
        #expect(result.exitCode == 0, "coffer add: \(result)")
    }

    /// Where xdg-desktop-portal does not run, any program could take its bus name: owning the
    /// name is not enough, the caller must be xdg-desktop-portal's program.
    @Test func aProgramThatTakesThePortalNameIsNotThePortal() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let portal = try Self.portalFrontend(f)
        let taken = try Self.retrieve("org.example.Victim", as: portal)
        #expect(taken.error?.name == DBusError.Name.accessDenied, "\(taken.reply)")
        #expect(taken.error?.message.contains("is not it") == true, "\(taken.reply)")
        #expect(taken.pipe.bytes.isEmpty && taken.pipe.reachedEnd, "\(taken.pipe)")
        #expect(try portal.library.search(Self.itemAttributes("org.example.Victim")).isEmpty)
    }

    @Test func onlyTheOwnerOfThePortalNameMayAskAndOnlyForAnApplicationID() throws {
        let f = try DaemonFixture(daemonOptions: Self.frontend)
        defer { f.shutdown() }
        let c = f.client!

        // Nobody owns org.freedesktop.portal.Desktop yet.
        let unowned = try Self.retrieve("org.example.Victim", as: c)
        #expect(unowned.error?.name == DBusError.Name.accessDenied, "\(unowned.reply)")
        #expect(unowned.error?.message.contains(PortalSecretInterface.frontendBusName) == true, "\(unowned.reply)")
        #expect(unowned.pipe.bytes.isEmpty && unowned.pipe.reachedEnd, "\(unowned.pipe)")

        // Someone owns it, but not the caller.
        let portal = try Self.portalFrontend(f)
        let impostor = try Self.retrieve("org.example.Victim", as: c)
        #expect(impostor.error?.name == DBusError.Name.accessDenied, "\(impostor.reply)")
        #expect(impostor.error?.message.contains("\(c.uniqueName) is not it") == true, "\(impostor.reply)")
        #expect(impostor.pipe.bytes.isEmpty && impostor.pipe.reachedEnd, "\(impostor.pipe)")
        #expect(try c.library.search(Self.itemAttributes("org.example.Victim")).isEmpty, "no secret is made for a refused caller")

        // The owner, with ids that are no application's.
        for bad in ["", "NoDots", "org..example", ".org.example", "org.example.", "org.exa mple.App", "org.example/App",
                    "org.example.Äpp", String(repeating: "a.", count: 128)] {
            let retrieval = try Self.retrieve(bad, as: portal)
            #expect(retrieval.error?.name == DBusError.Name.invalidArgs, "'\(bad)': \(retrieval.reply)")
            #expect(retrieval.pipe.bytes.isEmpty && retrieval.pipe.reachedEnd, "'\(bad)': \(retrieval.pipe)")
        }
        Self.expectSecret(try Self.retrieve("org.example.App_2-beta", as: portal))

        // A descriptor not open for writing: nothing is made.
        let pipe = try FileDescriptor.pipe()
        defer { pipe.writeEnd.close() }
        let readEnd = UnixFileDescriptor(adopting: pipe.readEnd)
        expectDBusError(DBusError.Name.invalidArgs) {
            _ = try portal.connection.call(RetrieveSecret.self, destination: SecretServiceClient.busName, path: PortalSecretInterface.path,
                                           .init(handle: "/h", appID: "org.example.ReadEnd", fd: readEnd))
        }
        readEnd.close()
        #expect(try c.library.search(Self.itemAttributes("org.example.ReadEnd")).isEmpty)

        // A reader that went away: an error, and cofferd carries on.
        let gone = try FileDescriptor.pipe()
        gone.readEnd.close()
        let orphan = UnixFileDescriptor(adopting: gone.writeEnd)
        expectDBusError(DBusError.Name.failed) {
            _ = try portal.connection.call(RetrieveSecret.self, destination: SecretServiceClient.busName, path: PortalSecretInterface.path,
                                           .init(handle: "/h", appID: "org.example.NoReader", fd: orphan))
        }
        orphan.close()
        #expect(f.daemonIsRunning)

        // The version property, and introspection.
        #expect(try c.library.property(PortalSecretInterface.Property.version, of: PortalSecretInterface.name,
                                       on: PortalSecretInterface.path) == .uint32(1))
        #expect(IntrospectionTests.interfaces(try c.introspect(PortalSecretInterface.path)).contains(PortalSecretInterface.name))
    }

    @Test func aLockedDefaultCollectionIsUnlockedThroughThePasswordDialog() throws {
        let f = try DaemonFixture(pinentry: ["wrong password", DaemonFixture.loginPassword], daemonOptions: Self.frontend)
        defer { f.shutdown() }
        let c = f.client!
        let portal = try Self.portalFrontend(f)
        _ = try c.library.lock([SecretPath.login])

        Self.expectSecret(try Self.retrieve("org.example.Locked", as: portal))
        #expect(try c.isLocked(SecretPath.login) == false)
        let log = f.pinentryLogText
        #expect(log.components(separatedBy: "GETPIN").count - 1 == 2, "log:\n\(log)")
        #expect(log.contains("org.example.Locked"), "the dialog names the application; log:\n\(log)")
        // The loop thread logs the unlock after the reply has left.
        #expect(eventually { f.daemonLog.contains("collection login unlocked by the Secret portal for org.example.Locked") },
                "log:\n\(f.daemonLog)")
        // The audit log names the application, and the log has no line about telling who it is.
        #expect(f.stopDaemon()?.exitCode == 0)
        let unlocks = try f.auditLog().filter { $0["action"] as? String == "unlock" && $0["detail"] as? String == "password typed in a dialog for the Secret portal" }
        #expect(unlocks.map { $0["app"] as? String } == ["flatpak:org.example.Locked"], "\(unlocks)")
        #expect(!f.daemonLog.contains("cannot tell which application"), "log:\n\(f.daemonLog)")
    }

    /// Two ways the default collection stays locked: the user cancels, or no dialog can be
    /// shown (a pinentry program that does not exist).
    enum UnlockRefused: String, CaseIterable, Sendable {
        case cancelledDialog, noDialog

        func fixture() throws -> DaemonFixture {
            switch self {
            case .cancelledDialog: try DaemonFixture(pinentry: ["CANCEL"], daemonOptions: PortalTests.frontend)
            case .noDialog: try DaemonFixture(pinentryProgram: "/nonexistent/pinentry", daemonOptions: PortalTests.frontend)
            }
        }

        /// What cofferd logs.
        var logged: String {
            switch self {
            case .cancelledDialog: "secret portal: org.example.Refused: cancelled: collection login stayed locked (the unlock dialog was cancelled)"
            case .noDialog: "secret portal: org.example.Refused: cancelled: collection login stayed locked: "
            }
        }
    }

    @Test(arguments: UnlockRefused.allCases)
    func aLockedDefaultCollectionLeftLockedAnswersCancelled(_ refused: UnlockRefused) throws {
        let f = try refused.fixture()
        defer { f.shutdown() }
        let c = f.client!
        let portal = try Self.portalFrontend(f)
        _ = try c.library.lock([SecretPath.login])

        let retrieval = try Self.retrieve("org.example.Refused", as: portal)
        #expect(retrieval.response == PortalSecretInterface.Response.cancelled.rawValue, "\(retrieval.reply)")
        #expect(retrieval.pipe.bytes.isEmpty && retrieval.pipe.reachedEnd, "\(retrieval.pipe)")
        #expect(try c.isLocked(SecretPath.login))
        #expect(try c.library.search(Self.itemAttributes("org.example.Refused")).locked.isEmpty)
        #expect(eventually { f.daemonLog.contains(refused.logged) }, "log:\n\(f.daemonLog)")
    }

    @Test func withoutADefaultCollectionTheErrorSaysSo() throws {
        let f = try DaemonFixture(unlock: false, daemonOptions: Self.frontend)
        defer { f.shutdown() }
        let portal = try Self.portalFrontend(f)
        let retrieval = try Self.retrieve("org.example.Homeless", as: portal)
        #expect(retrieval.error?.name == DBusError.Name.failed, "\(retrieval.reply)")
        #expect(retrieval.error?.message.contains("no default collection") == true, "\(retrieval.reply)")
        #expect(retrieval.pipe.bytes.isEmpty && retrieval.pipe.reachedEnd)
    }
}

/// Results written from the threads of `concurrentPerform`, one slot each.
private final class ResultSlots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value]
    init(_ values: [Value]) { storage = values }
    func set(_ index: Int, _ value: Value) { lock.withLock { storage[index] = value } }
    var values: [Value] { lock.withLock { storage } }
}
