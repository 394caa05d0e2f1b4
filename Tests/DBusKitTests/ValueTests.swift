import DBusKit
import Testing

@Suite struct ObjectPathTests {
    @Test(arguments: ["/", "/a", "/org/freedesktop/secrets", "/_", "/a_b/C9/x", "/org/freedesktop/secrets/collection/My_5fKeys"])
    func validPaths(_ text: String) throws {
        #expect(try ObjectPath(text).rawValue == text)
        #expect(ObjectPath.isValid(text))
    }

    @Test(arguments: ["", "a", "//", "/a/", "/a//b", "/a-b", "/a b", "/ü", "/a.b", "/a\0b", "/org/freedesktop/secrets/collection/my-keys"])
    func invalidPathsAreRejectedInSwift(_ text: String) {
        #expect(throws: DBusError.self) { try ObjectPath(text) }
        #expect(ObjectPath(validating: text) == nil)
    }

    @Test(arguments: ["", "a-b", "a/b", "a b", "ü", "."])
    func invalidElementsAreRejected(_ element: String) {
        #expect(throws: DBusError.self) { try ObjectPath.root.appending(element: element) }
    }

    @Test func pathHelpers() throws {
        let p: ObjectPath = "/org/freedesktop/secrets/collection/login"
        #expect(p.elements == ["org", "freedesktop", "secrets", "collection", "login"])
        #expect(p.lastElement == "login")
        #expect(p.parent == "/org/freedesktop/secrets/collection")
        #expect(ObjectPath.root.parent == nil)
        #expect(p.isInside("/org/freedesktop/secrets"))
        #expect(p.isInside(.root))
        #expect(!(ObjectPath(validating: "/org/freedesktop/secretsX")!).isInside("/org/freedesktop/secrets"))
        #expect(try ObjectPath.root.appending(element: "org") == "/org")
        #expect(ObjectPath.root.appending(escaping: "a-b") == "/a_2db")
    }

    @Test(arguments: ["", "-", "_", "__", "_5f", "a b", "My Keys", "login", "ünïcødé 🔑", "a/b", "x\u{0}y", "1234", "tab\there", "%41", "_zz"])
    func escapingRoundTrips(_ text: String) throws {
        let element = ObjectPath.escapeElement(text)
        #expect(!element.isEmpty)
        #expect(ObjectPath.isValid("/" + element), "escaped '\(element)' is not a valid element")
        #expect(ObjectPath.unescapeElement(element) == text)
        #expect(try ObjectPath.root.appending(element: element).lastElement == element)
        #expect(ObjectPath.isUnescaped(text) == (element == text), "isUnescaped disagrees with escapeElement on '\(text)'")
    }

    @Test func escapingMatchesGnomeKeyring() {
        #expect(ObjectPath.escapeElement("My_Keys") == "My_5fKeys")
        #expect(ObjectPath.escapeElement("my-keys") == "my_2dkeys")
        #expect(ObjectPath.escapeElement("é") == "_c3_a9")
        #expect(ObjectPath.escapeElement("login") == "login")
        #expect(ObjectPath.unescapeElement("My_5FKeys") == "My_Keys")   // upper-case hex accepted
        #expect(ObjectPath.unescapeElement("a_zz") == "a_zz")           // not an escape: literal
        #expect(ObjectPath.unescapeElement("_ff") == nil)                // not UTF-8
    }

    @Test func escapingIsInjectiveOnManyStrings() {
        var seen: [String: String] = [:]
        let alphabet = Array("aZ09_-. é🔑/")
        var strings: [String] = [""]
        for a in alphabet { strings.append(String(a)); for b in alphabet { strings.append(String([a, b])) } }
        for s in strings {
            let e = ObjectPath.escapeElement(s)
            if let other = seen[e] { Issue.record("'\(s)' and '\(other)' both escape to \(e)") }
            seen[e] = s
            #expect(ObjectPath.unescapeElement(e) == s)
        }
    }
}

@Suite struct SignatureTests {
    @Test(arguments: ["", "s", "a{sv}", "a{ss}", "(oayays)", "a{o(oayays)}", "ao", "ay", "sa{sv}b", "aas", "a(ii)", "v", "a{ia{sv}}", "((y))", "h", "g"])
    func validSignatures(_ text: String) throws {
        #expect(try Signature(text).rawValue == text)
    }

    @Test(arguments: ["a", "{sv}", "a{vs}", "a{s}", "a{svs}", "()", "(s", "s)", "z", "a{(s)s}", "ae", "r", "a{sv", "}"])
    func invalidSignaturesAreRejectedInSwift(_ text: String) {
        #expect(throws: DBusError.self) { try Signature(text) }
        #expect(Signature(validating: text) == nil)
    }

    @Test func limits() throws {
        #expect(throws: DBusError.self) { try Signature(String(repeating: "s", count: 256)) }
        #expect(try Signature(String(repeating: "s", count: 255)).completeTypes.count == 255)
        #expect(throws: DBusError.self) { try Signature(String(repeating: "a", count: 33) + "s") }
        #expect(try Signature(String(repeating: "a", count: 32) + "s").isSingleCompleteType)
        #expect(throws: DBusError.self) { try Signature(String(repeating: "(", count: 33) + "s" + String(repeating: ")", count: 33)) }
    }

    @Test func splitting() throws {
        #expect(Signature(validating: "sa{sv}(oayays)b")?.completeTypes == ["s", "a{sv}", "(oayays)", "b"])
        #expect(Signature.variantDictionary.isSingleCompleteType)
        #expect(!(Signature(validating: "ss")!).isSingleCompleteType)
        #expect(Signature.string.isBasicType)
        #expect(!Signature.variant.isBasicType)
    }
}

@Suite struct ValueTests {
    static let secret = DBusValue.structure([.objectPath("/org/freedesktop/secrets/session/s1"), .bytes([]),
                                             .bytes([1, 2, 3]), .string("text/plain")])

    @Test func signatures() throws {
        #expect(ValueTests.secret.signatureString == "(oayays)")
        #expect(DBusValue.variantDictionary([:]).signatureString == "a{sv}")
        #expect(DBusValue.stringDictionary([:]).signatureString == "a{ss}")
        #expect(DBusValue.objectPathArray([]).signatureString == "ao")
        let secrets = DBusValue.dictionary(keySignature: .objectPath, valueSignature: "(oayays)",
                                           [.init(key: .objectPath("/a"), value: ValueTests.secret)])
        #expect(secrets.signatureString == "a{o(oayays)}")
        #expect(try DBusValue.signature(of: [.string("x"), .variant(.int32(1)), secrets]) == "sva{o(oayays)}")
    }

    /// A typed dictionary is sent sorted by key, as the convenience constructors send theirs;
    /// other key types keep an order of their own.
    @Test func typedDictionariesAreSentSortedByKey() throws {
        let attributes = ["b": "2", "a!": "3", "a": "1", "ü": "4", "": "0"]
        #expect(attributes.dbusValue == .stringDictionary(attributes))
        #expect(attributes.dbusValue.dictionaryEntries?.map { $0.key } == ["", "a", "a!", "b", "ü"].map { DBusValue.string($0) })
        let paths: [ObjectPath: UInt32] = ["/b": 2, "/a/c": 3, "/a": 1]
        #expect(paths.dbusValue.dictionaryEntries?.map { $0.key } == [.objectPath("/a"), .objectPath("/a/c"), .objectPath("/b")])
        let numbers: [UInt32: String] = [3: "c", 1: "a", 2: "b"]
        #expect(numbers.dbusValue == Dictionary(uniqueKeysWithValues: numbers.reversed()).dbusValue)
        #expect(try [UInt32: String](dbusValue: numbers.dbusValue) == numbers)
    }

    @Test func malformedValuesAreRejected() throws {
        #expect(throws: DBusError.self) { try DBusValue.array(elementSignature: .string, [.int32(1)]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.array(elementSignature: "ss", []).validate() }
        #expect(throws: DBusError.self) { try DBusValue.structure([]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.dictionary(keySignature: .variant, valueSignature: .string, []).validate() }
        #expect(throws: DBusError.self) {
            try DBusValue.dictionary(keySignature: .string, valueSignature: .string,
                                     [.init(key: .string("a"), value: .int32(1))]).validate()
        }
        #expect(throws: DBusError.self) { try DBusValue.string("nul\0inside").validate() }
        var deep = DBusValue.int32(1)
        for _ in 0..<70 { deep = .variant(deep) }
        #expect(throws: DBusError.self) { try deep.validate() }
        // Nothing of the above may reach libdbus through a message either.
        let message = try DBusMessage.signal(path: "/a", interface: "org.coffer.Test", member: "S")
        #expect(throws: DBusError.self) { try message.append([.structure([])]) }
        #expect(throws: DBusError.self) { try message.append([.array(elementSignature: .byte, [.string("x")])]) }
        #expect(message.signature == .empty)
    }

    /// Array elements and dictionary entries are compared with their declared type field by
    /// field: a structure with a field too many or too few, or another container, is refused.
    @Test(arguments: [
        ("(si)", DBusValue.structure([.string("a"), .int32(1)]), true),
        ("(si)", .structure([.string("a"), .string("b")]), false),
        ("(si)", .structure([.string("a"), .int32(1), .int32(2)]), false),
        ("(s)", .structure([.string("a"), .int32(1)]), false),
        ("(sii)", .structure([.string("a"), .int32(1)]), false),
        ("a{sv}", .variantDictionary(["k": .uint32(1)]), true),
        ("a{ss}", .variantDictionary([:]), false),
        ("aay", .array(elementSignature: "ay", [.bytes([1])]), true),
        ("aay", .bytes([]), false),
        ("(oayays)", ValueTests.secret, true),
        ("(oays)", ValueTests.secret, false),
        ("((s)y)", .structure([.structure([.string("x")]), .byte(1)]), true),
        ("((s)y)", .structure([.structure([.string("x"), .byte(1)])]), false),
    ] as [(Signature, DBusValue, Bool)])
    func elementTypesAreComparedFieldByField(_ type: Signature, _ value: DBusValue, _ matches: Bool) throws {
        let array = DBusValue.array(elementSignature: type, [value])
        let dictionary = DBusValue.dictionary(keySignature: .string, valueSignature: type, [.init(key: .string("k"), value: value)])
        let message = try DBusMessage.signal(path: "/a", interface: "org.coffer.Test", member: "S")
        if matches {
            try array.validate()
            try dictionary.validate()
            try message.appendDictionary(keySignature: .string, valueSignature: type) { add in try add(.string("k"), value) }
            #expect(try message.arguments() == [dictionary])
        } else {
            #expect(throws: DBusError.self) { try array.validate() }
            #expect(throws: DBusError.self) { try dictionary.validate() }
            #expect(throws: DBusError.self) {
                try message.appendDictionary(keySignature: .string, valueSignature: type) { add in try add(.string("k"), value) }
            }
        }
    }

    @Test func namesAreValidatedBeforeLibdbus() {
        #expect(throws: DBusError.self) { try DBusMessage.methodCall(destination: "not a name", path: "/", interface: nil, member: "M") }
        #expect(throws: DBusError.self) { try DBusMessage.methodCall(destination: nil, path: "/", interface: "noDots", member: "M") }
        #expect(throws: DBusError.self) { try DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "bad-member") }
        #expect(throws: DBusError.self) { try DBusMessage.signal(path: "/", interface: "a.b", member: "") }
        #expect(throws: DBusError.self) { try DBusMessage.signal(path: "/", interface: "a.b", member: "S", destination: "-bad") }
    }

    @Test func messageBodyRoundTripsWithoutABus() throws {
        let values: [DBusValue] = [
            .byte(255), .boolean(true), .int16(-3), .uint16(65535), .int32(Int32.min), .uint32(UInt32.max),
            .int64(Int64.min), .uint64(UInt64.max), .double(-1.5), .string("ünï 🔑"), .objectPath("/x/y"),
            .signature("a{sv}"), ValueTests.secret, .variant(.variant(.stringArray(["a", ""]))),
            .array(elementSignature: "ay", [.bytes([0]), .bytes([])]),
        ]
        let message = try DBusMessage.methodCall(destination: "org.coffer.X", path: "/p", interface: "org.coffer.I",
                                                 member: "M", arguments: values)
        #expect(try message.arguments() == values)
        #expect(message.signature.rawValue == "ybnqiuxtdsog(oayays)vaay")
        #expect(message.kind == .methodCall)
        #expect(message.path == "/p")
        #expect(message.interface == "org.coffer.I")
        #expect(message.member == "M")
        #expect(message.destination == "org.coffer.X")
    }

    @Test func replyingToAnUnsentCallIsRejectedInSwift() throws {
        // libdbus aborts on a reply to a message without serial; we must throw instead.
        let call = try DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M")
        #expect(throws: DBusError.self) { try call.makeReply([]) }
        #expect(throws: DBusError.self) { try call.makeErrorReply(.failed("x")) }
        let signal = try DBusMessage.signal(path: "/", interface: "a.b", member: "S")
        #expect(throws: DBusError.self) { try signal.makeReply([]) }
    }
}
