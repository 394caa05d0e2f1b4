import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import Testing

/// Values of every type the Secret Service uses go client → bus → server object → bus → client.
@Suite(.timeLimit(.minutes(10))) struct RoundTripTests {
    static let session: ObjectPath = "/org/freedesktop/secrets/session/s1"
    static func secret(_ bytes: [UInt8]) -> DBusValue {
        .structure([.objectPath(session), .bytes([9, 8, 7]), .bytes(bytes), .string("text/plain; charset=utf8")])
    }

    static let cases: [(String, [DBusValue])] = [
        ("a{sv} with nested variants", [.variantDictionary([
            "org.freedesktop.Secret.Item.Label": .string("My ünïcødé label 🔑"),
            "org.freedesktop.Secret.Item.Attributes": .stringDictionary(["user": "me", "server": "example.org", "": "empty key"]),
            "Nested": .variant(.variant(.int32(-7))),
            "Bytes": .bytes([0, 255, 10]),
            "Paths": .objectPathArray(["/a", "/a/b"]),
            "Secret": secret([1, 2, 3]),
            "Empty": .variantDictionary([:]),
        ])]),
        ("a{ss}", [.stringDictionary(["xdg:schema": "org.example.Password", "a b": "c-d", "ü": ""])]),
        ("(oayays)", [secret(Array("hunter2".utf8))]),
        ("a{o(oayays)}", [.dictionary(keySignature: .objectPath, valueSignature: "(oayays)", [
            .init(key: .objectPath("/org/freedesktop/secrets/collection/login/1"), value: secret([1])),
            .init(key: .objectPath("/org/freedesktop/secrets/collection/login/2"), value: secret([])),
        ])]),
        ("ao", [.objectPathArray(["/org/freedesktop/secrets/collection/login", "/"])]),
        ("empty containers", [.objectPathArray([]), .stringArray([]), .bytes([]), .variantDictionary([:]),
                              .stringDictionary([:]), .array(elementSignature: "(ii)", []),
                              .dictionary(keySignature: .objectPath, valueSignature: "(oayays)", [])]),
        ("all basic types", [.byte(0), .boolean(false), .int16(Int16.min), .uint16(UInt16.max), .int32(-1),
                             .uint32(UInt32.max), .int64(Int64.max), .uint64(UInt64.max), .double(3.141592653589793),
                             .string(""), .objectPath("/"), .signature("a{o(oayays)}")]),
        ("OpenSession shape", [.string("plain"), .variant(.string(""))]),
        ("CreateItem shape", [.variantDictionary(["org.freedesktop.Secret.Item.Label": .string("x")]),
                              secret([0x41]), .boolean(true)]),
        ("nested arrays", [.array(elementSignature: "as", [.stringArray(["a"]), .stringArray([])]),
                           .array(elementSignature: "ay", [.bytes([1]), .bytes([])]),
                           .array(elementSignature: "v", [.variant(.uint64(1)), .variant(.stringArray(["z"]))])]),
    ]

    @Test func everySecretServiceShapeRoundTrips() throws {
        let h = try Harness()
        defer { h.shutdown() }
        let signatures = try RoundTripTests.cases.map { try DBusValue.signature(of: $0.1) }
        h.server.objectServer.register(path: "/echo", object: EchoObject(signatures: signatures))
        #expect(try h.server.requestName(testBusName, flags: .doNotQueue) == .primaryOwner)
        h.startServer()

        for (index, (label, values)) in RoundTripTests.cases.enumerated() {
            let reply = try h.client.call(destination: testBusName, path: "/echo", interface: testInterface,
                                          member: "Echo\(index)", arguments: values)
            #expect(reply == values, "\(label) did not round-trip")
            #expect(try DBusValue.signature(of: reply) == signatures[index])
        }
    }

    @Test func multiMegabyteByteArraysRoundTrip() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(path: "/echo", object: EchoObject(signatures: ["ay", "(oayays)"]))
        h.startServer()

        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        let big = [UInt8](random.readData(ofLength: 6 << 20))
        try random.close()
        let start = Date()
        let reply = try h.client.call(destination: h.server.uniqueName, path: "/echo", interface: testInterface,
                                      member: "Echo0", arguments: [.bytes(big)])
        #expect(reply.first?.bytes?.count == big.count)
        #expect(reply.first?.bytes == big)
        let secret = RoundTripTests.secret(Array(big.prefix(3 << 20)))
        let reply2 = try h.client.call(destination: h.server.uniqueName, path: "/echo", interface: testInterface,
                                       member: "Echo1", arguments: [secret])
        #expect(reply2 == [secret])
        print("9 MiB of echoes took \(Date().timeIntervalSince(start)) s")
    }

    @Test func manyClientsAtOnceWhileALargeMessageIsInFlight() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(path: "/echo", object: EchoObject(signatures: ["ay", "a{ss}"]))
        h.startServer()

        let clients = try (0..<6).map { _ in try h.newClient() }
        let failures = Mutex(0)
        let done = DispatchGroup()
        let big = [UInt8](repeating: 0x5a, count: 4 << 20)
        DispatchQueue.global().async(group: done) {
            let reply = try? h.client.call(destination: h.server.uniqueName, path: "/echo", interface: testInterface,
                                           member: "Echo0", arguments: [.bytes(big)])
            if reply?.first?.bytes != big { failures.withLock { $0 += 1 } }
        }
        for (n, client) in clients.enumerated() {
            DispatchQueue.global().async(group: done) {
                for i in 0..<25 {
                    let dict = DBusValue.stringDictionary(["client": "\(n)", "i": "\(i)"])
                    let reply = try? client.call(destination: h.server.uniqueName, path: "/echo",
                                                 interface: testInterface, member: "Echo1", arguments: [dict])
                    if reply != [dict] { failures.withLock { $0 += 1 } }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 } == 0)
    }
}
