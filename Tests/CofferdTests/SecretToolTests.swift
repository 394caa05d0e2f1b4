import CofferTestSupport
import DBusKit
import Foundation
import Synchronization
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// The real `secret-tool` (libsecret) against cofferd.
@Suite(.timeLimit(.minutes(10))) struct SecretToolTests {
    @Test func storeThenLookupPrintsExactlyTheSecret() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.grant()   // this process checks what secret-tool stored
        try f.store(label: "Mail password", ["service": "mail", "user": "bob"], secret: Array("hunter2".utf8))

        let found = try f.lookup(["service": "mail", "user": "bob"])
        #expect(found.exitCode == 0, "\(found)")
        #expect(found.stdoutBytes == Array("hunter2".utf8))   // raw, no newline (not a tty)
        #expect(found.stderr.isEmpty, "\(found.stderr)")
        // A subset of the attributes finds it too; another value does not.
        #expect(try f.lookup(["user": "bob"]).stdoutBytes == Array("hunter2".utf8))
        let missing = try f.lookup(["user": "alice"])
        #expect(missing.exitCode == 1)
        #expect(missing.stdoutBytes.isEmpty)

        // What libsecret stored, seen over D-Bus: label, attributes, text/plain, in login.
        let items = try f.client.items(of: SecretPath.login)
        try #require(items.count == 1)
        let item = try f.client.library.item(items[0])
        #expect(item.label == "Mail password")
        #expect(item.attributes == ["service": "mail", "user": "bob"])
        let secret = try f.client.library.secret(of: items[0], session: f.client.library.openSession())
        #expect(secret.bytes.unprotected == Array("hunter2".utf8))
        #expect(secret.contentType == "text/plain")
    }

    @Test func searchAllPrintsItemsOnStdoutAndAttributesOnStderr() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.store(label: "First", ["app": "search-test", "n": "1"], secret: Array("one".utf8))
        try f.store(label: "Second", ["app": "search-test", "n": "2", "xdg:schema": "org.example.Test"], secret: Array("two".utf8))
        try f.store(label: "Other", ["app": "elsewhere"], secret: Array("three".utf8))

        let result = try f.secretTool(["search", "--all", "app", "search-test"])
        #expect(result.exitCode == 0, "\(result)")

        // Expected blocks, one per item, with the times the daemon reports (printed in UTC).
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var expectedOut: [String: String] = [:]   // item id -> block
        var expectedErr: [String] = []
        for item in try f.client.library.search(["app": "search-test"]).unlocked {
            let p = try f.client.library.item(item)
            let (label, attributes) = (p.label, p.attributes)
            let created = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(p.created)))
            let modified = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(p.modified)))
            let secret = label == "First" ? "one" : "two"
            var block = "[/\(item.lastElement!)]\nlabel = \(label)\nsecret = \(secret)\ncreated = \(created)\nmodified = \(modified)\n"
            if let schema = attributes["xdg:schema"] { block += "schema = \(schema)\n" }
            expectedOut[item.lastElement!] = block
            expectedErr += attributes.filter { $0.key != "xdg:schema" }.map { "attribute.\($0.key) = \($0.value)" }
        }
        try #require(expectedOut.count == 2)
        // libsecret's order of the items is not fixed: compare as a set of blocks.
        let blocks = result.stdout.components(separatedBy: "[/").dropFirst().map { "[/" + $0 }
        #expect(Set(blocks) == Set(expectedOut.values), "stdout:\n\(result.stdout)")
        #expect(result.stdout.hasPrefix("[/"))
        let errLines = result.stderr.split(separator: "\n").map(String.init)
        #expect(errLines.sorted() == expectedErr.sorted(), "stderr:\n\(result.stderr)")
        #expect(!result.stdout.contains("three") && !result.stdout.contains("Other"))
    }

    @Test func clearDeletesAndLookupThenFails() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.store(label: "a", ["site": "x", "user": "1"], secret: Array("s1".utf8))
        try f.store(label: "b", ["site": "x", "user": "2"], secret: Array("s2".utf8))
        try f.store(label: "c", ["site": "y"], secret: Array("s3".utf8))

        let cleared = try f.secretTool(["clear", "site", "x"])
        #expect(cleared.exitCode == 0, "\(cleared)")
        #expect(try f.lookup(["site": "x"]).exitCode == 1)
        #expect(try f.lookup(["site": "x", "user": "2"]).exitCode == 1)
        #expect(try f.lookup(["site": "y"]).stdoutBytes == Array("s3".utf8))
        #expect(try f.client.items(of: SecretPath.login).count == 1)
        // Nothing left to clear: exit status 1.
        #expect(try f.secretTool(["clear", "site", "x"]).exitCode == 1)
    }

    @Test func storingTheSameAttributesAgainReplacesTheSecret() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.store(label: "v1", ["k": "same"], secret: Array("first".utf8))
        let before = try f.client.items(of: SecretPath.login)
        try f.store(label: "v2", ["k": "same"], secret: Array("second".utf8))
        let after = try f.client.items(of: SecretPath.login)
        #expect(after.count == 1)
        #expect(before == after, "replace keeps the item path")
        #expect(try f.lookup(["k": "same"]).stdoutBytes == Array("second".utf8))
        #expect(try f.client.library.item(after[0]).label == "v2")
    }

    @Test func unicodeAndOddBytesRoundTrip() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.grant()   // this process checks what secret-tool stored
        let unicode = "pässwörd 🔑 密码 — ελληνικά"
        try f.store(label: "Ünïcödé label ✓", ["kind": "unicode", "wört": "wärt"], secret: Array(unicode.utf8))
        #expect(try f.lookup(["kind": "unicode"]).stdoutBytes == Array(unicode.utf8))
        #expect(try f.lookup(["wört": "wärt"]).stdoutBytes == Array(unicode.utf8))

        // Newlines, tabs, control characters, trailing newline: stored and printed byte for byte.
        let odd: [UInt8] = Array("line1\nline2\r\n\ttab\u{1}\u{7f}\u{1b}[0m end\n\n".utf8)
        try f.store(label: "multi-line", ["kind": "odd"], secret: odd)
        #expect(try f.lookup(["kind": "odd"]).stdoutBytes == odd)

        // Invalid UTF-8: secret-tool does not check it on store, and lookup prints any
        // text/plain secret as it is.
        let binary: [UInt8] = [0xff, 0xfe, 0x80, 0x41, 0xc3, 0x28, 0x0a]
        try f.store(label: "binary", ["kind": "binary"], secret: binary)
        let session = try f.client.library.openSession()
        let item = try #require(try f.client.library.search(["kind": "binary"]).unlocked.first)
        #expect(try f.client.secretBytes(of: item, session: session) == binary)
        #expect(try f.lookup(["kind": "binary"]).stdoutBytes == binary)

        // The longest secret secret-tool sends (8192 bytes).
        let long = (0..<8192).map { UInt8(0x21 + $0 % 90) }
        try f.store(label: "long", ["kind": "long"], secret: long)
        #expect(try f.lookup(["kind": "long"]).stdoutBytes == long)
    }

    @Test func manyItems() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.grant()   // this process checks what secret-tool stored
        let count = 200
        // Store in a few parallel streams (each secret-tool is its own client).
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { stream in
            for n in stride(from: stream, to: count, by: 4) {
                do {
                    let r = try f.secretTool(["store", "--label=item \(n)", "bulk", "yes", "n", "\(n)"],
                                             stdin: Array("secret-\(n)".utf8))
                    if r.exitCode != 0 { failures.withLock { $0.append("store \(n): \(r)") } }
                } catch {
                    failures.withLock { $0.append("store \(n): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")
        #expect(try f.client.library.search(["bulk": "yes"]).unlocked.count == count)
        #expect(try f.client.items(of: SecretPath.login).count == count)
        for n in [0, 1, 57, 99, 128, 173, 199] {
            let r = try f.lookup(["bulk": "yes", "n": "\(n)"])
            #expect(r.stdout == "secret-\(n)", "lookup \(n): \(r)")
        }
        // All of them at once over D-Bus.
        let session = try f.client.library.openSession()
        let all = try f.client.secrets(of: try f.client.items(of: SecretPath.login), session: session)
        #expect(all.count == count)
        #expect(Set(all.values.map(\.utf8String)) == Set((0..<count).map { "secret-\($0)" }))
    }

    @Test func lockLocksTheCollection() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        try f.store(label: "x", ["lock": "test"], secret: Array("s".utf8))
        #expect(try f.client.isLocked(SecretPath.login) == false)
        let result = try f.secretTool(["lock"])
        // libsecret 0.20.5's secret-tool lock crashes (SIGSEGV in g_list_free_full while
        // freeing its lists) after the Lock call succeeded; the daemon's state is what counts.
        #expect(result.exitCode == 0 || result.signal == SIGSEGV, "\(result)")
        #expect(try f.client.isLocked(SecretPath.login) == true)
        #expect(try f.client.isLocked(SecretPath.defaultAlias) == true)
        let search = try f.client.library.search(["lock": "test"])
        #expect(search.unlocked.isEmpty)
        #expect(search.locked.count == 1)
        // Lookup of a locked item: the unlock prompt is dismissed (no pinentry answer): exit 1.
        try? f.setPinentryScript([])
        let lookup = try f.lookup(["lock": "test"])
        #expect(lookup.exitCode != 0 && lookup.stdoutBytes.isEmpty, "\(lookup)")
        #expect(f.daemonIsRunning)
    }
}
