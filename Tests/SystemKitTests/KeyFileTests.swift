import SystemKit
import Testing

/// The one key-file reader: each line is blank, a group, an entry or malformed; what to make
/// of the malformed ones is left to the caller, with their line numbers.
struct KeyFileTests {
    @Test(arguments: [
        ("", KeyFile.Line.blank),
        ("  \t", .blank),
        ("  # a comment = [x]", .blank),
        ("[Desktop Entry]", .group("Desktop Entry")),
        ("[ every collection ]\r", .group("every collection")),
        ("[]", .group("")),
        ("Name=Coffer", .entry(key: "Name", value: "Coffer")),
        ("  lock-after-idle =  5m  ", .entry(key: "lock-after-idle", value: "5m  ")),
        ("secret=a=b\r", .entry(key: "secret", value: "a=b")),
        ("empty=", .entry(key: "empty", value: "")),
        ("[unclosed", .malformed),
        ("no equals sign", .malformed),
        (" = no key", .malformed),
    ])
    func eachLineIsOneKind(text: String, line: KeyFile.Line) {
        #expect(KeyFile.Line(Substring(text)) == line)
    }

    @Test func groupsInOrderTheLastValueOfAKeyAndWhatIsWrongByLine() {
        let file = KeyFile("""
            stray=before any group
            [b]
            k = one\u{20}\u{20}
            [a]
            list = x; ;y;
            not a line
            [b]
            k = two\u{20}\u{20}
            """)
        #expect(file.groups == ["b", "a"])
        #expect(file.value("k", in: "b") == "two" && file.untrimmedValue("k", in: "b") == "two  ")
        #expect(file.list("list", in: "a") == ["x", "y"])
        #expect(file.hasGroup("a") && !file.hasGroup("c") && file.value("k", in: "c") == nil)
        #expect(file.problems.map(\.description) == ["line 1: 'stray' comes before any [group]",
                                                     "line 6: not 'key = value', a [group] or a # comment"])
    }

    @Test func linesEndInNewlineOrCarriageReturnAndNewline() {
        let file = KeyFile("[a]\r\nk = v \r\n[b]\nk=w\r\n")
        #expect(file.groups == ["a", "b"] && file.problems.isEmpty)
        #expect(file.value("k", in: "a") == "v" && file.untrimmedValue("k", in: "a") == "v " && file.value("k", in: "b") == "w")
    }
}
