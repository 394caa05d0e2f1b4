import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Introspect on every level of the tree, and `gdbus introspect --recurse` over all of it.
@Suite(.timeLimit(.minutes(10))) struct IntrospectionTests {
    static func children(_ xml: String) -> Set<String> {
        var names = Set<String>()
        var rest = Substring(xml)
        while let start = rest.range(of: "<node name=\"") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { break }
            names.insert(String(rest[..<end]))
            rest = rest[end...]
        }
        return names
    }

    static func interfaces(_ xml: String) -> Set<String> {
        var names = Set<String>()
        var rest = Substring(xml)
        while let start = rest.range(of: "<interface name=\"") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { break }
            names.insert(String(rest[..<end]))
            rest = rest[end...]
        }
        return names
    }

    @Test func everyLevelListsItsChildrenAndInterfaces() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let item = try c.quickItem(attributes: ["i": "1"], secret: "x")
        let id = try #require(item.lastElement)

        #expect(Self.children(try c.introspect("/")).contains("org"))
        #expect(Self.children(try c.introspect("/org")).contains("freedesktop"))
        #expect(Self.children(try c.introspect("/org/freedesktop")).contains("secrets"))

        let service = try c.introspect(SecretPath.service)
        #expect(Self.interfaces(service).isSuperset(of: [ServiceInterface.name, GnomeKeyringInterface.name, StandardInterface.properties, StandardInterface.introspectable]))
        #expect(Self.children(service).isSuperset(of: ["collection", "aliases"]))
        #expect(service.contains("<method name=\"OpenSession\">"))
        #expect(service.contains("<signal name=\"CollectionCreated\">"))
        #expect(service.contains("<property name=\"Collections\" type=\"ao\" access=\"read\"/>"))

        #expect(Self.children(try c.introspect(SecretPath.collections)) == ["login", "session"])
        #expect(Self.children(try c.introspect(SecretPath.aliases)).contains("default"))

        let collection = try c.introspect(SecretPath.login)
        #expect(Self.interfaces(collection).contains(CollectionInterface.name))
        #expect(Self.children(collection) == [id])
        #expect(collection.contains("<method name=\"CreateItem\">"))
        #expect(Self.children(try c.introspect(SecretPath.defaultAlias)) == [id])

        let itemXML = try c.introspect(item)
        #expect(Self.interfaces(itemXML).contains(ItemInterface.name))
        #expect(!Self.interfaces(itemXML).contains(CollectionInterface.name))
        #expect(itemXML.contains("<method name=\"GetSecret\">"))
        #expect(itemXML.contains("<property name=\"Label\" type=\"s\" access=\"readwrite\"/>"))

        // Sessions and prompts appear while they exist.
        let session = try c.library.openSession()
        let sessionXML = try c.introspect(session.path)
        #expect(Self.interfaces(sessionXML).contains(SessionInterface.name))
        #expect(Self.children(try c.introspect(SecretPath.sessions)).contains(session.path.lastElement!))
    }

    /// Whatever a node lists as a child must itself answer Introspect: tree walkers
    /// (`gdbus introspect --recurse`, busctl tree, d-feet) stop at the first failure.
    @Test func gdbusRecursiveIntrospectionWalksTheWholeTree() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let item = try c.quickItem(attributes: ["i": "1"], secret: "x")
        _ = try c.library.createCollection(label: "Second", password: SecureBytes("pw"), session: try c.library.openSession())

        // Walk it ourselves first (clearer failures), with and without live sessions.
        for withSession in [false, true] {
            let extra = try f.newClient()
            if withSession { _ = try extra.library.openSession(.plain) }
            var queue: [ObjectPath] = ["/"]
            var visited = 0
            while let path = queue.popLast() {
                visited += 1
                let xml: String
                do { xml = try c.introspect(path) } catch {
                    Issue.record("Introspect \(path) failed: \(error) (listed by its parent)")
                    continue
                }
                for child in Self.children(xml) {
                    queue.append(path == "/" ? try ObjectPath("/" + child) : try path.appending(element: child))
                }
            }
            #expect(visited >= 10)
            extra.close()
        }

        let gdbus = try #require(Executables.inPath("gdbus"))
        let run = try ChildProcess(gdbus, arguments: ["introspect", "--session", "--dest", SecretServiceClient.busName,
                                                      "--object-path", "/", "--recurse"],
                                   environment: f.environment())
        let result = run.wait(timeout: 30)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "gdbus: \(result.stderr)")
        #expect(result.stdout.contains("node /org/freedesktop/secrets/session {"))
        #expect(result.stdout.contains("node \(item.rawValue) {"))
        #expect(result.stdout.contains("node /org/freedesktop/secrets/collection/Second {"))
        #expect(result.stdout.contains("interface \(ItemInterface.name) {"))
        // gdbus reads the properties with GetAll on the way: values are shown.
        #expect(result.stdout.contains("readonly b Locked = false;"))
    }
}
