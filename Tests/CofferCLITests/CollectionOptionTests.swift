import CofferTestSupport
import Foundation
import Testing

/// Every command that takes a collection takes `--collection ID`, in both modes; the older
/// positional forms still work, and naming two different collections changes nothing.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CollectionOptionTests {
    @Test(arguments: Mode.allCases) func everyCommandTakesCollection(mode: Mode) throws {
        let w = try mode.start()
        defer { w.stop() }
        let created = try w.expect(0, ["create-collection", "--collection", "work", "--password-stdin"], stdin: "one\n")
        #expect(created.stdout == "created collection 'work'\n")
        #expect(try w.expect(0, ["add", "--collection", "work", "--service", "vpn", "--password-stdin"],
                             stdin: "one\nvpn secret").stdout == "added work/1\n")
        #expect(try w.expect(0, ["search", "--collection", "work", "--service", "vpn", "--secret-only", "--password-stdin"],
                             stdin: "one\n").stdout == "vpn secret\n")
        #expect(try w.expect(0, ["update", "--collection", "work", "--service", "vpn", "--set-label", "VPN", "--password-stdin"],
                             stdin: "one\n").stdout == "updated work/1\n")
        #expect(try w.expect(0, ["lock", "--collection", "work"]).stdout == "collection 'work' is locked\n")
        try w.expect(3, ["unlock", "--collection", "work", "--password-stdin"], stdin: "wrong\n")
        try w.expect(0, ["unlock", "--collection", "work", "--password-stdin"], stdin: "one\n")
        #expect(try w.expect(0, ["passwd", "--collection", "work", "--password-stdin"], stdin: "one\ntwo\n").stdout
            == "password of 'work' changed\n")
        // Making another the default takes the password of the one it was (login).
        #expect(try w.expect(0, ["alias", "set", "default", "--collection", "work", "--password-stdin"], stdin: "\(Mode.loginPassword)\n").stdout
            == "'default' now names 'work'\n")
        // Without --collection, commands use the default alias's collection.
        #expect(try w.expect(0, ["search", "--service", "vpn", "--password-stdin"], stdin: "two\n").stdout.contains("[work/1]"))

        // The positional forms scripts and the README use still work.
        #expect(try w.expect(0, ["lock", "work"]).stdout == "collection 'work' is locked\n")
        try w.expect(0, ["unlock", "work", "--password-stdin"], stdin: "two\n")
        try w.expect(0, ["alias", "set", "default", "login", "--password-stdin"], stdin: "two\n")
        // The same collection both ways is fine; two different ones are a usage error that changes nothing.
        try w.expect(0, ["lock", "work", "--collection", "work"])
        for arguments in [["alias", "set", "default", "work", "--collection", "login"],
                          ["passwd", "login", "--collection", "work", "--password-stdin"],
                          ["delete-collection", "login", "--collection", "work", "--yes"],
                          ["create-collection", "new", "--collection", "other", "--password-stdin"]] {
            let twice = try w.expect(2, arguments, stdin: "two\nthree\n")
            #expect(twice.stderr.hasPrefix("coffer: the collection is named twice") && twice.stderr.split(separator: "\n").count == 1,
                    "\(mode): \(twice.stderr)")
        }
        #expect(try w.expect(0, ["alias"]).stdout.contains("default -> login"))
        #expect(try w.expect(2, ["delete-collection", "--yes"]).stderr.contains("--collection"))

        #expect(try w.expect(0, ["delete", "--collection", "work", "--service", "vpn", "--password-stdin"], stdin: "two\n").stdout
            == "deleted work/1\n")
        try w.expect(0, ["delete-collection", "--collection", "work", "--yes"])
        try w.expect(1, ["search", "--collection", "work"])
    }
}
