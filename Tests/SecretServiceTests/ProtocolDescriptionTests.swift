import CofferCore
import CofferCrypto
import DBusKit
import Foundation
@testable import SecretService
import SecretServiceProtocol
import Testing

/// The interfaces are described once, in SecretServiceProtocol: the file in `dbus/`, the
/// server's handlers and the server's own Introspect answers all follow from that description.
@Suite(.timeLimit(.minutes(5))) struct ProtocolDescriptionTests {
    static let interfaceFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dbus/org.freedesktop.Secrets.xml")

    /// Fails when `dbus/org.freedesktop.Secrets.xml` differs from the description; run with
    /// `COFFER_WRITE_INTERFACE_FILE=1` (scripts/generate-introspection) to write it anew.
    @Test func theInterfaceFileIsGeneratedFromTheDescription() throws {
        let generated = SecretInterfaces.document
        if ProcessInfo.processInfo.environment["COFFER_WRITE_INTERFACE_FILE"] == "1" {
            try generated.write(to: Self.interfaceFile, atomically: true, encoding: .utf8)
        }
        let file = try String(contentsOf: Self.interfaceFile, encoding: .utf8)
        #expect(file == generated, "dbus/org.freedesktop.Secrets.xml is out of date: run scripts/generate-introspection")
    }

    /// Every method the description lists has a typed handler on the object that serves it.
    @Test func everyDescribedMethodHasAHandler() {
        func check<Object>(_ table: MethodTable<Object>, _ interfaces: [InterfaceDescription]) {
            for interface in interfaces {
                for method in interface.methods {
                    #expect(table.handles(interface.name, method.name), "no handler for \(interface.name).\(method.name)")
                }
            }
        }
        check(ServiceObject.methods, [ServiceInterface.description, GnomeKeyringInterface.description])
        check(CollectionObject.methods, [CollectionInterface.description, CofferCollectionInterface.description])
        check(ItemObject.methods, [ItemInterface.description])
        check(SessionObject.methods, [SessionInterface.description])
        check(PromptObject.methods, [PromptInterface.description])
        check(PortalSecretObject.methods, [PortalSecretInterface.description])
    }

    /// What the running server answers to Introspect is, interface for interface, the
    /// description's text.
    @Test func theServerIntrospectsAsDescribed() throws {
        Crypto.initialize()
        let server = try InProcessServer()
        defer { server.stop() }
        let session = try server.call(ServiceInterface.OpenSession.self, on: SecretPath.service,
                                      .init(algorithm: "plain", input: .string(""))).session
        let wire = WireSecret(session: session, parameters: [], value: try SecureBytes([1]), contentType: "text/plain")
        let item = try server.call(CollectionInterface.CreateItem.self, on: SecretPath.collection(.session),
                                   .init(properties: .init(label: "x"), secret: wire, replace: false)).item
        let prompt = try server.call(ServiceInterface.CreateCollection.self, on: SecretPath.service,
                                     .init(properties: .init(label: "Other"), alias: "")).prompt
        let objects: [(ObjectPath, [InterfaceDescription])] = [
            (SecretPath.service, [ServiceInterface.description, GnomeKeyringInterface.description]),
            (SecretPath.collection(.session), [CollectionInterface.description, CofferCollectionInterface.description]),
            (item, [ItemInterface.description]),
            (session, [SessionInterface.description]),
            (prompt, [PromptInterface.description]),
        ]
        let described = SecretInterfaces.document
        for (path, interfaces) in objects {
            let answered = try server.client.connection.call(destination: server.name, path: path,
                                                  interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            let xml = try #require(answered.first?.string)
            for interface in interfaces {
                let block = Self.block(of: interface.name, in: xml)
                #expect(block != nil, "\(path) does not list \(interface.name)")
                #expect(block == Self.block(of: interface.name, in: described), "\(path): \(interface.name) differs")
            }
        }
    }

    /// The `<interface name="…">…</interface>` element of `name` in `xml`.
    static func block(of name: String, in xml: String) -> Substring? {
        guard let start = xml.range(of: "<interface name=\"\(name)\">"),
              let end = xml[start.upperBound...].range(of: "</interface>") else { return nil }
        return xml[start.lowerBound..<end.upperBound]
    }
}
