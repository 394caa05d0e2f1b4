import CofferTestSupport
import DBusKit
import Foundation
import SystemKit
import Testing

/// Writes bytes through a file descriptor it is sent, then closes it: what a portal backend
/// does with the descriptor xdg-desktop-portal passes it.
struct DescriptorWriterObject: DBusObject {
    static let interface = InterfaceDescription("org.coffer.Writer", methods: [
        MethodDescription("Write", in: [ArgumentDescription("fd", UnixFileDescriptor.self),
                                        ArgumentDescription("bytes", [UInt8].self)],
                          out: [ArgumentDescription("written", UInt32.self)]),
        MethodDescription("WriteLater", in: [ArgumentDescription("fd", UnixFileDescriptor.self),
                                             ArgumentDescription("bytes", [UInt8].self)],
                          out: [ArgumentDescription("written", UInt32.self)]),
    ])

    var interfaces: [InterfaceDescription] { [Self.interface] }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        let descriptor = try UnixFileDescriptor(dbusValue: call.arguments[0])
        let bytes = try [UInt8](dbusValue: call.arguments[1])
        guard call.member == "WriteLater" else {
            defer { descriptor.close() }
            try descriptor.withDescriptor { try $0.writeAll(bytes) }
            return .reply([.uint32(UInt32(bytes.count))])
        }
        // Deferred, as slow work is: written and answered from another thread.
        Thread.detachNewThread {
            defer { descriptor.close() }
            do {
                try descriptor.withDescriptor { try $0.writeAll(bytes) }
                call.reply([.uint32(UInt32(bytes.count))])
            } catch {
                call.fail(error)
            }
        }
        return .deferred
    }
}

/// Unix file descriptors (`h`) in messages: sent, received, owned and closed exactly once.
@Suite(.timeLimit(.minutes(5))) struct FileDescriptorPassingTests {
    @Test func connectionsOnAPrivateBusCanPassDescriptors() throws {
        let h = try Harness()
        defer { h.shutdown() }
        #expect(h.client.canPassFileDescriptors)
        #expect(h.server.canPassFileDescriptors)
    }

    /// The client sends a pipe's write end; the server writes through the descriptor it
    /// received and closes it; the client reads what it wrote, then end of file (so no copy
    /// is left open anywhere: not in the server, the bus, or either message).
    @Test func aPipeWriteEndCrossesTheBusAndIsClosedAfterUse() throws {
        let message = Array("through the descriptor".utf8)
        let contents = try Self.writeThroughTheServer(message, member: "Write")
        #expect(contents.bytes == message)
        #expect(contents.reachedEnd, "a copy of the write end stayed open: \(contents)")
    }

    /// A deferred reply sent from another thread: once it is out, nothing on the server still
    /// holds the call's message (whose descriptor would keep the pipe open while the loop waits).
    @Test func aDeferredReplyLetsGoOfTheCallsDescriptors() throws {
        let message = Array("later".utf8)
        let contents = try Self.writeThroughTheServer(message, member: "WriteLater")
        #expect(contents.bytes == message)
        #expect(contents.reachedEnd, "the server still holds the call's message: \(contents)")
    }

    /// Sends a pipe's write end to `DescriptorWriterObject`'s `member` with `message`, closes
    /// the client's own copy, and reads the pipe until end of file (at most 10 s).
    private static func writeThroughTheServer(_ message: [UInt8], member: String) throws -> PipeContents {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(path: "/writer", object: DescriptorWriterObject())
        h.startServer()
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let sent = try UnixFileDescriptor(duplicating: pipe.writeEnd)
        pipe.writeEnd.close()
        let reply = try h.client.call(destination: h.server.uniqueName, path: "/writer", interface: "org.coffer.Writer",
                                      member: member, arguments: [.unixFD(sent), .bytes(message)])
        #expect(reply == [.uint32(UInt32(message.count))])
        #expect(sent.isOpen, "sending leaves the sender's descriptor open: libdbus sends a duplicate")
        sent.close()
        return try pipe.readEnd.readUntilEnd(timeout: 10)
    }

    /// Both directions: the reply carries the descriptor back, as a new descriptor of the same
    /// pipe, also inside a variant in a dictionary.
    @Test func anEchoedDescriptorComesBackAsANewOneOfTheSamePipe() throws {
        let h = try Harness()
        defer { h.shutdown() }
        h.server.objectServer.register(path: "/echo", object: EchoObject(signatures: ["h", "a{sv}"]))
        h.startServer()
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let sent = UnixFileDescriptor(adopting: pipe.writeEnd)

        let plain = try h.client.call(destination: h.server.uniqueName, path: "/echo", interface: testInterface,
                                      member: "Echo0", arguments: [.unixFD(sent)])
        let back = try UnixFileDescriptor(dbusValue: try #require(plain.first))
        #expect(back != sent, "a received descriptor is a new one, owned by its own value")
        try back.withDescriptor { try $0.writeAll(Array("one ".utf8)) }

        let nested = try h.client.call(destination: h.server.uniqueName, path: "/echo", interface: testInterface,
                                       member: "Echo1", arguments: [.variantDictionary(["fd": .unixFD(sent), "n": .uint32(2)])])
        let inner = try #require(nested.first?.variantDictionary?["fd"])
        let backAgain = try UnixFileDescriptor(dbusValue: inner)
        try backAgain.withDescriptor { try $0.writeAll(Array("two".utf8)) }

        for descriptor in [sent, back, backAgain] { descriptor.close() }
        let contents = try pipe.readEnd.readUntilEnd(timeout: 10)
        #expect(contents.bytes == Array("one two".utf8))
        #expect(contents.reachedEnd, "\(contents)")
    }

    @Test func aClosedDescriptorIsRefusedBeforeLibdbusSeesIt() throws {
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let descriptor = UnixFileDescriptor(adopting: pipe.writeEnd)
        descriptor.close()
        #expect(!descriptor.isOpen)
        expectDBusError(DBusError.Name.invalidArgs) {
            _ = try DBusMessage.methodCall(destination: testBusName, path: "/x", interface: testInterface, member: "M",
                                           arguments: [.structure([.string("a"), .unixFD(descriptor)])])
        }
        expectDBusError(DBusError.Name.failed) { try descriptor.withDescriptor { _ in } }
    }

    @Test func typedDecodingAcceptsOnlyDescriptors() throws {
        #expect(UnixFileDescriptor.dbusType == "h")
        expectDBusError(DBusError.Name.invalidArgs) { _ = try UnixFileDescriptor(dbusValue: .int32(3)) }
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let descriptor = UnixFileDescriptor(adopting: pipe.writeEnd)
        #expect(try UnixFileDescriptor(dbusValue: descriptor.dbusValue) == descriptor)
        #expect(descriptor.dbusValue.signatureString == "h")
    }

    /// Closing, then dropping the last copy, closes once: a descriptor opened meanwhile that
    /// got the same number stays open.
    @Test func closingAndDroppingClosesExactlyOnce() throws {
        let first = try FileDescriptor.pipe()
        first.readEnd.close()
        let reused = try Self.pipeOpenedWhile(closing: UnixFileDescriptor(adopting: first.writeEnd))
        defer { reused.readEnd.close(); reused.writeEnd.close() }
        try reused.writeEnd.writeAll([1])
        #expect(try reused.readEnd.read(upTo: 1) == [1], "a descriptor that reused a closed number was closed again")

        // Released: the caller owns it; the value no longer closes it.
        let pipe = try FileDescriptor.pipe()
        defer { pipe.readEnd.close() }
        let released = try #require(UnixFileDescriptor(adopting: pipe.writeEnd).release())
        try released.writeAll([2])
        released.close()
        #expect(try pipe.readEnd.readUntilEnd(timeout: 5).bytes == [2])
    }

    /// Closes `owner` through one copy, opens a pipe (likely on the number just freed), and
    /// only then lets every copy go.
    private static func pipeOpenedWhile(closing owner: UnixFileDescriptor) throws -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
        let copy = owner
        copy.close()
        let pipe = try FileDescriptor.pipe()
        withExtendedLifetime(owner) {}
        return pipe
    }
}
