import DBusKit

/// Seeds for `DBusMessageHarness`: the calls the Secret Service receives from libsecret and
/// gnome-keyring's clients, in wire format, plus the other kinds of message and a few values
/// that stretch the decoder (every basic type, nesting, NaN, two messages in one read).
enum DBusMessageSeeds {
    static let service: ObjectPath = "/org/freedesktop/secrets"
    static let defaultCollection: ObjectPath = "/org/freedesktop/secrets/aliases/default"
    static let item: ObjectPath = "/org/freedesktop/secrets/collection/login/i7"
    static let session: ObjectPath = "/org/freedesktop/secrets/session/s1"
    static let serviceInterface = "org.freedesktop.Secret.Service"

    static func all() throws -> [Seed] {
        let secret = DBusValue.structure([.objectPath(session), .bytes(Array(repeating: 7, count: 16)),
                                          .bytes(Array("hunter2".utf8)), .string("text/plain")])
        let itemProperties = DBusValue.variantDictionary([
            "org.freedesktop.Secret.Item.Label": .string("Git"),
            "org.freedesktop.Secret.Item.Attributes": .stringDictionary(["service": "git", "account": "me"]),
        ])
        let calls: [(String, ObjectPath, String, String, [DBusValue])] = [
            ("open-session-plain", service, serviceInterface, "OpenSession", [.string("plain"), .variant(.string(""))]),
            ("open-session-dh", service, serviceInterface, "OpenSession",
             [.string("dh-ietf1024-sha256-aes128-cbc-pkcs7"), .variant(.bytes(Array(repeating: 0xA5, count: 128)))]),
            ("create-item", defaultCollection, "org.freedesktop.Secret.Collection", "CreateItem",
             [itemProperties, secret, .boolean(true)]),
            ("search-items", service, serviceInterface, "SearchItems", [.stringDictionary(["service": "git"])]),
            ("get-secrets", service, serviceInterface, "GetSecrets", [.objectPathArray([item]), .objectPath(session)]),
            ("unlock", service, serviceInterface, "Unlock", [.objectPathArray([defaultCollection])]),
            ("create-collection", service, serviceInterface, "CreateCollection",
             [.variantDictionary(["org.freedesktop.Secret.Collection.Label": .string("Work")]), .string("")]),
            ("set-alias", service, serviceInterface, "SetAlias",
             [.string("default"), .objectPath("/org/freedesktop/secrets/collection/login")]),
            ("item-set-secret", item, "org.freedesktop.Secret.Item", "SetSecret", [secret]),
            ("properties-set", item, "org.freedesktop.DBus.Properties", "Set",
             [.string("org.freedesktop.Secret.Item"), .string("Attributes"), .variant(.stringDictionary(["a": "b"]))]),
            ("properties-get-all", defaultCollection, "org.freedesktop.DBus.Properties", "GetAll",
             [.string("org.freedesktop.Secret.Collection")]),
            ("introspect", service, "org.freedesktop.DBus.Introspectable", "Introspect", []),
            ("unlock-with-master-password", service, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
             "UnlockWithMasterPassword", [.objectPath("/org/freedesktop/secrets/collection/login"), secret]),
            ("every-basic-type", service, "org.example.Fuzz", "Basics",
             [.structure([.byte(1), .boolean(false), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6),
                          .uint64(7), .double(.nan), .string("ü"), .objectPath("/a/b"), .signature("a{sv}")])]),
            ("nested", service, "org.example.Fuzz", "Nested",
             [.variant(.variant(.dictionary(keySignature: .int32, valueSignature: "a{sv}", [
                 .init(key: .int32(1), value: .variantDictionary(["x": .array(elementSignature: "(yv)",
                                                                              [.structure([.byte(0), .variant(.bytes([]))])])]))
             ])))]),
        ]
        var seeds: [Seed] = []
        var serial: UInt32 = 1
        for (name, path, interface, member, arguments) in calls {
            let call = try DBusMessage.methodCall(destination: "org.freedesktop.secrets", path: path,
                                                  interface: interface, member: member, arguments: arguments)
            seeds.append(Seed(name: name, bytes: call.wireFormat(serial: serial, sender: ":1.42")))
            serial += 1
        }
        let received = DBusMessage.messages(inWireFormat: seeds[0].bytes)[0]
        let reply = try received.makeReply([.variant(.string("")), .objectPath(session)])
        let error = try received.makeErrorReply(.invalidArgs("no such algorithm"))
        let signal = try DBusMessage.signal(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                            member: "NameOwnerChanged",
                                            arguments: [.string(":1.42"), .string(":1.42"), .string("")])
        seeds += [
            Seed(name: "method-return", bytes: reply.wireFormat(serial: 100, sender: ":1.7")),
            Seed(name: "error", bytes: error.wireFormat(serial: 101, sender: ":1.7")),
            Seed(name: "signal-name-owner-changed",
                 bytes: signal.wireFormat(serial: 102, sender: "org.freedesktop.DBus")),
            Seed(name: "two-messages", bytes: seeds[3].bytes + seeds[4].bytes),
        ]
        return seeds
    }
}
