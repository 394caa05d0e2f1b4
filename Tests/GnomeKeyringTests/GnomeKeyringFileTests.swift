import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import GnomeKeyringFormat
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Keyring files written by the real gnome-keyring-daemon, read back: every item, label,
/// attribute (unicode, empty) and secret (text, binary), in both formats; and what a wrong
/// password or a damaged file gives.
@Suite(.timeLimit(.minutes(5)), .enabled(if: GnomeKeyringDaemon.executable != nil && Executables.inPath("secret-tool") != nil,
                                         "gnome-keyring-daemon or secret-tool is not installed (scripts/setup installs them)"))
struct GnomeKeyringFileTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    /// What the tests store: label, attributes, secret.
    static let stored: [(String, [String: String], [UInt8])] = [
        ("Ünïcode ✓ label", ["service": "git", "user": "ånn ✓", "empty": ""], Array("s3cret ✓".utf8)),
        ("binary", ["kind": "binary"], [0x00, 0x01, 0xFF, 0x80, 0x0A]),
    ] + (0..<40).map { ("item \($0)", ["n": "\($0)"], Array("secret \($0)".utf8)) }

    static func storeAll(in keyring: GnomeKeyringDaemon) throws {
        for (label, attributes, secret) in stored {
            let result = try keyring.secretTool(["store", "--label=\(label)"] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] },
                                                stdin: secret)
            try #require(result.succeeded, "secret-tool store: \(result)")
        }
    }

    static func expectAllStored(_ read: GnomeKeyring) throws {
        #expect(read.items.count == stored.count)
        for (label, attributes, secret) in stored {
            let item = try #require(read.items.first { $0.label == label }, "no item '\(label)'")
            // secret-tool stores with libsecret's generic schema, named in xdg:schema.
            #expect(item.attributes.filter { $0.key != GnomeKeyring.schemaAttribute } == attributes)
            #expect(item.secret == (try SecureBytes(secret)), "the secret of '\(label)'")
            #expect(item.created > 1_600_000_000 && item.modified >= item.created)
        }
        #expect(Set(read.items.map(\.id)).count == read.items.count, "ids are unique")
    }

    @Test func theBinaryFormat() throws {
        let keyring = try GnomeKeyringDaemon(password: "pw for gk")
        defer { keyring.remove() }
        try Self.storeAll(in: keyring)
        keyring.stop()
        let file = try #require(FileManager.default.contents(atPath: keyring.keyringsDirectory + "/login.keyring"))
        let bytes = [UInt8](file)

        #expect(GnomeKeyringFile.isEncrypted(bytes))
        #expect(try GnomeKeyringFile.label(bytes) == "Login")
        let read = try GnomeKeyringFile.read(bytes, password: try Self.bytes("pw for gk"))
        #expect(read.label == "Login")
        try Self.expectAllStored(read)

        #expect(throws: GnomeKeyringFileError.passwordNeeded) { try GnomeKeyringFile.read(bytes, password: nil) }
        #expect(throws: GnomeKeyringFileError.wrongPassword) { try GnomeKeyringFile.read(bytes, password: try Self.bytes("pw for GK")) }
        // A byte changed in the encrypted part fails its check like a wrong password.
        var flipped = bytes
        flipped[bytes.count - 20] ^= 0x01
        #expect(throws: GnomeKeyringFileError.wrongPassword) { try GnomeKeyringFile.read(flipped, password: try Self.bytes("pw for gk")) }
        // Cut short anywhere: damaged, saying where; never a crash.
        for length in [20, 40, 100, bytes.count / 2, bytes.count - 16, bytes.count - 1] {
            #expect {
                try GnomeKeyringFile.read(Array(bytes.prefix(length)), password: try Self.bytes("pw for gk"))
            } throws: { error in
                guard case .damaged(let why) = error as? GnomeKeyringFileError else { return false }
                return !why.isEmpty
            }
        }
        // Another version is named, not guessed at.
        var version = bytes
        version[16] = 1
        #expect {
            try GnomeKeyringFile.read(version, password: try Self.bytes("pw for gk"))
        } throws: { error in
            if case .unsupportedFormat = error as? GnomeKeyringFileError { return true }
            return false
        }
        #expect(throws: GnomeKeyringFileError.notAKeyring) { try GnomeKeyringFile.read(Array("hello".utf8), password: nil) }
    }

    /// gnome-keyring writes a keyring with an empty password as text.
    @Test func theTextFormat() throws {
        let keyring = try GnomeKeyringDaemon(password: "pw for gk")
        defer { keyring.remove() }
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        let session = try client.openSession()
        let collection = try client.createCollection(label: "Plain Keys", password: try SecureBytes(count: 0), session: session)
        try client.setAlias("default", to: collection)
        client.close()
        try Self.storeAll(in: keyring)
        keyring.stop()

        let names = try FileManager.default.contentsOfDirectory(atPath: keyring.keyringsDirectory)
            .filter { $0.hasSuffix(".keyring") && $0 != "login.keyring" }
        #expect(names.count == 1, "\(names)")
        let file = try #require(FileManager.default.contents(atPath: keyring.keyringsDirectory + "/" + (names.first ?? "")))
        let bytes = [UInt8](file)
        #expect(!GnomeKeyringFile.isEncrypted(bytes))
        let read = try GnomeKeyringFile.read(bytes, password: nil)
        #expect(read.label == "Plain Keys")
        try Self.expectAllStored(read)
    }
}

/// What Coffer writes, gnome-keyring opens: the way back.
@Suite(.timeLimit(.minutes(5)), .enabled(if: GnomeKeyringDaemon.executable != nil,
                                         "gnome-keyring-daemon is not installed (scripts/setup installs it)"))
struct GnomeKeyringWriterTests {
    static func bytes(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }

    static func keyring() throws -> GnomeKeyring {
        var items: [GnomeKeyring.Item] = [
            .init(id: 1, label: "Ünïcode ✓", attributes: ["service": "git", "user": "ånn", "empty": ""],
                  secret: try bytes("s3cret ✓"), created: 1_700_000_000, modified: 1_700_000_500),
            .init(id: 2, label: "binary", attributes: ["kind": "binary", "port": "8080"], uint32Attributes: ["port"],
                  secret: try SecureBytes([0, 1, 0xFF, 0x80]), created: 1_700_000_100, modified: 1_700_000_100),
            .init(id: 3, label: "network", attributes: ["xdg:schema": "org.gnome.keyring.NetworkPassword", "server": "example.org"],
                  secret: try bytes("net"), created: 1_700_000_200, modified: 1_700_000_300),
        ]
        for n in 4...60 {
            items.append(.init(id: UInt32(n), label: "item \(n)", attributes: ["n": "\(n)"], secret: try bytes("secret \(n)"),
                               created: 1_700_000_000 + UInt64(n), modified: 1_700_000_000 + UInt64(n)))
        }
        return GnomeKeyring(label: "From Coffer", created: 1_690_000_000, modified: 1_700_000_600, items: items)
    }

    /// An item's attributes as gnome-keyring shows them: with a schema.
    static func shown(_ item: GnomeKeyring.Item) -> [String: String] {
        item.attributes.merging([GnomeKeyring.schemaAttribute: item.schema]) { have, _ in have }
    }

    @Test func gnomeKeyringOpensWhatCofferWrites() throws {
        let original = try Self.keyring()
        let file = try GnomeKeyringFile.write(original, password: try Self.bytes("way back"))
        // Read back by Coffer's own reader first: exact.
        let reread = try GnomeKeyringFile.read(file, password: try Self.bytes("way back"))
        #expect(reread.label == original.label && reread.items.count == original.items.count)
        for (a, b) in zip(original.items, reread.items) {
            #expect(a.id == b.id && a.label == b.label && a.secret == b.secret)
            #expect(Self.shown(a) == b.attributes)
            #expect(a.created == b.created && a.modified == b.modified && a.uint32Attributes == b.uint32Attributes)
        }

        // Then by gnome-keyring itself.
        let keyring = try GnomeKeyringDaemon(password: "login pw", keyrings: ["fromcoffer": file])
        defer { keyring.remove() }
        let client = SecretServiceClient(connection: try DBusConnection(address: keyring.bus.address))
        defer { client.close() }
        let collection = SecretPath.service.appending(escaping: "collection").appending(escaping: "fromcoffer")
        #expect(try client.collections().contains(collection))
        #expect(try client.collection(collection).isLocked)
        let session = try client.openSession()
        #expect(throws: DBusError.self) { try client.unlock(collection, password: try Self.bytes("wrong"), session: session) }
        try client.unlock(collection, password: try Self.bytes("way back"), session: session)
        let shown = try client.collection(collection)
        #expect(shown.label == "From Coffer" && shown.items.count == original.items.count)
        for item in original.items {
            let path = collection.appending(escaping: String(item.id))
            let seen = try client.item(path)
            #expect(seen.label == item.label)
            // gnome-keyring adds a marker for each uint32 attribute.
            #expect(seen.attributes.filter { !$0.key.hasPrefix("gkr:compat:") } == Self.shown(item), "\(item.label)")
            #expect(try client.secret(of: path, session: session).bytes == item.secret, "\(item.label)")
        }
        // Its searches find them while locked too (the hashed attributes are right).
        _ = try client.lock([collection])
        #expect(try client.search(["service": "git"]).locked == [collection.appending(escaping: "1")])
        #expect(try client.search(["port": "8080"]).locked == [collection.appending(escaping: "2")])
    }
}
