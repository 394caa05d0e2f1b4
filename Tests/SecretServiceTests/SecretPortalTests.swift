import CofferCore
import CofferCrypto
import CofferTestSupport
import DBusKit
@testable import SecretService
import SecretServiceProtocol
import Synchronization
import SystemKit
import Testing

/// Keeps the audit events it is given.
final class RecordedAudit: AuditRecorder {
    private let events = Mutex<[AuditEvent]>([])
    func record(_ event: AuditEvent) { events.withLock { $0.append(event) } }
    var all: [AuditEvent] { events.withLock { $0 } }
}

/// The Secret portal's backend in process: which application ids it takes, and what it
/// writes to the audit log (the end-to-end behaviour is in CofferdTests' PortalTests).
@Suite(.timeLimit(.minutes(5))) struct SecretPortalTests {
    @Test(arguments: ["org.example.App", "io.github.someone.Tool_2", "com.example.app-beta", "a.b", "org.x.Y.Z.W"])
    func applicationIDs(_ id: String) {
        #expect(SecretPortal.problem(withAppID: id) == nil)
    }

    @Test(arguments: ["", "App", "org..example", ".org.example", "org.example.", "org.exa mple", "org/example.App",
                      "org.exämple.App", "org.example.App\n", String(repeating: "a.", count: 127) + "ab"])
    func notApplicationIDs(_ id: String) {
        #expect(SecretPortal.problem(withAppID: id) != nil, "'\(id)' was taken for an application id")
    }

    @Test func everyRequestIsOnePortalEventWithoutTheSecret() throws {
        Crypto.initialize()
        let audit = RecordedAudit()
        let server = try InProcessServer(store: true, portalAudit: audit)
        defer { server.stop() }
        try server.keychain.createCollection(label: "Login", id: .login, password: SecureBytes(Array("pw".utf8)))
        let frontend = try DBusConnection(address: server.bus.address)
        defer { frontend.close() }

        func retrieve(_ appID: String) throws -> PortalSecretInterface.RetrieveSecret.Output {
            let pipe = try FileDescriptor.pipe()
            defer { pipe.readEnd.close() }
            let fd = UnixFileDescriptor(adopting: pipe.writeEnd)
            defer { fd.close() }
            return try frontend.call(PortalSecretInterface.RetrieveSecret.self, destination: server.name,
                                     path: PortalSecretInterface.path, .init(handle: "/h", appID: appID, fd: fd))
        }

        // Before it owns org.freedesktop.portal.Desktop: refused.
        #expect(throws: DBusError.self) { try retrieve("org.example.App") }
        #expect(try frontend.requestName(PortalSecretInterface.frontendBusName, flags: .doNotQueue) == .primaryOwner)
        #expect(try retrieve("org.example.App").response == 0)
        #expect(try retrieve("org.example.App").response == 0)
        #expect(throws: DBusError.self) { try retrieve("not an id") }

        let events = audit.all
        try #require(events.count == 4, "\(events)")
        let app = Application(kind: .flatpak, name: "org.example.App")
        #expect(events.allSatisfy { $0.action == .portal })
        #expect(events[0].outcome == .denied && events[0].application == app, "\(events[0])")
        #expect(events[0].detail?.contains("not xdg-desktop-portal") == true, "\(events[0])")
        for (event, how) in zip(events[1...2], ["made", "found"]) {
            #expect(event.outcome == .ok && event.application == app && event.detail == how, "\(event)")
            #expect(event.collection == .login && event.item != nil && event.label == "Application key for org.example.App", "\(event)")
        }
        #expect(events[1].item == events[2].item)
        #expect(events[3].outcome == .denied && events[3].application == nil, "\(events[3])")
    }
}
