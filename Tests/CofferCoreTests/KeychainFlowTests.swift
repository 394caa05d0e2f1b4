import CofferCore
import CofferCrypto
import Testing

/// The Keychain semantics, over the in-memory collection (the store's own tests repeat the
/// flows against real files).
@Suite struct KeychainFlowTests {
    let keychain = Keychain(provider: nil)

    func secret(_ text: String) throws -> Secret {
        Secret(bytes: try SecureBytes(Array(text.utf8)))
    }

    func text(_ secret: Secret?) -> String? {
        secret.map { $0.bytes.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } }
    }

    @Test func addDuplicateReplaceSearchUpdateDelete() throws {
        let attributes = ["service": "git", "account": "me"]
        let first = try keychain.add(NewItem(label: "Git", attributes: attributes, secret: secret("one")), to: .session)

        #expect(throws: CofferError.duplicateItem) {
            try keychain.add(NewItem(label: "Git", attributes: attributes, secret: secret("two")), to: .session)
        }

        let replaced = try keychain.add(NewItem(label: "Git 2", attributes: attributes, secret: secret("two")),
                                        to: .session, onDuplicate: .replace)
        #expect(replaced == first)

        var results = try keychain.search(Query(attributes: ["service": "git"], returnAttributes: true, returnSecret: true))
        #expect(results.count == 1)
        #expect(results[0].metadata?.label == "Git 2")
        #expect(results[0].metadata?.attributes == attributes)
        #expect(text(results[0].secret) == "two")

        let updated = try keychain.update(Query(attributes: ["account": "me"]),
                                          with: ItemChanges(label: "Renamed", secret: secret("three")))
        #expect(updated == [first])
        results = try keychain.search(Query(attributes: attributes, returnAttributes: true, returnSecret: true))
        #expect(results.first?.metadata?.label == "Renamed")
        #expect(text(results.first?.secret) == "three")

        let deleted = try keychain.delete(Query(attributes: attributes))
        #expect(deleted == [first])
        #expect(try keychain.search(Query(attributes: attributes)).isEmpty)
    }

    @Test func insertTellsNewFromReplaced() throws {
        let attributes = ["service": "git", "account": "me"]
        let first = try keychain.insert(NewItem(label: "Git", attributes: attributes, secret: secret("one")),
                                        into: .session, onDuplicate: .replace)
        #expect(first.isNew)
        let again = try keychain.insert(NewItem(label: "Git", attributes: attributes, secret: secret("two")),
                                        into: .session, onDuplicate: .replace)
        #expect(!again.isNew && again.reference == first.reference)
        let second = try keychain.insert(NewItem(label: "Git", attributes: attributes, secret: secret("three")),
                                         into: .session, onDuplicate: .allow)
        #expect(second.isNew && second.reference != first.reference)
    }

    @Test func allowAddsASecondItem() throws {
        let attributes = ["service": "web"]
        let a = try keychain.add(NewItem(label: "a", attributes: attributes, secret: secret("1")), to: .session)
        let b = try keychain.add(NewItem(label: "b", attributes: attributes, secret: secret("2")), to: .session,
                                 onDuplicate: .allow)
        #expect(a != b)
        #expect(try keychain.search(Query(attributes: attributes)).map(\.reference) == [a, b])
        #expect(try keychain.search(Query(attributes: attributes, limit: .one)).map(\.reference) == [a])
    }

    /// A removal reports the label the item had (the audit log names what was deleted).
    @Test func removalReportsTheLabelTheItemHad() throws {
        let a = try keychain.add(NewItem(label: "first", attributes: ["n": "1"], secret: secret("1")), to: .session)
        let b = try keychain.add(NewItem(label: "second", attributes: ["n": "2"], secret: secret("2")), to: .session)
        let removed = try keychain.commit([.remove(b.item), .remove(a.item)], in: .session)
        #expect(removed.map(\.label) == ["second", "first"])
        #expect(removed.map(\.isNew) == [false, false])
    }

    @Test func updateOfMissingItemIsNotFoundAndDeleteOfMissingSucceeds() throws {
        #expect(throws: CofferError.itemNotFound) {
            try keychain.update(Query(attributes: ["service": "nope"]), with: ItemChanges(label: "x"))
        }
        #expect(try keychain.delete(Query(attributes: ["service": "nope"])).isEmpty)
    }

    @Test func searchMatchesSubsetsAndEmptyQueryMatchesAll() throws {
        try keychain.add(NewItem(label: "1", attributes: ["a": "1", "b": "2"], secret: secret("s")), to: .session)
        try keychain.add(NewItem(label: "2", attributes: ["a": "1", "b": "3"], secret: secret("s")), to: .session)
        #expect(try keychain.search(Query(attributes: ["a": "1"])).count == 2)
        #expect(try keychain.search(Query(attributes: ["a": "1", "b": "3"])).count == 1)
        #expect(try keychain.search(Query(attributes: ["a": "2"])).isEmpty)
        #expect(try keychain.search(Query(attributes: ["A": "1"])).isEmpty)
        #expect(try keychain.search(Query()).count == 2)
    }

    @Test func updateReplacesTheWholeAttributeMap() throws {
        let ref = try keychain.add(NewItem(label: "x", attributes: ["a": "1", "b": "2"], secret: secret("s")), to: .session)
        try keychain.update(ref, with: ItemChanges(attributes: ["c": "3"]))
        #expect(try keychain.metadata(of: ref).attributes == ["c": "3"])
        #expect(try keychain.search(Query(attributes: ["a": "1"])).isEmpty)
    }

    @Test func itemClassSetsTheSchema() throws {
        let ref = try keychain.add(NewItem(class: .internetPassword, label: "site", attributes: ["server": "example.org"],
                                           secret: secret("pw")), to: .session)
        let metadata = try keychain.metadata(of: ref)
        #expect(metadata.attributes["xdg:schema"] == "org.gnome.keyring.NetworkPassword")
        #expect(ItemClass(attributes: metadata.attributes) == .internetPassword)
    }

    @Test func oversizedInputIsRejectedAndChangesNothing() throws {
        let big = String(repeating: "x", count: Limits.maxAttributeValueBytes + 1)
        #expect(throws: CofferError.self) {
            try keychain.add(NewItem(label: "l", attributes: ["k": big], secret: secret("s")), to: .session)
        }
        let hugeSecret = Secret(bytes: try SecureBytes(count: Limits.maxSecretBytes + 1))
        #expect(throws: CofferError.self) {
            try keychain.add(NewItem(label: "l", attributes: ["k": "v"], secret: hugeSecret), to: .session)
        }
        #expect(throws: CofferError.self) {
            try keychain.add(NewItem(label: "l\u{0}", attributes: ["k": "v"], secret: secret("s")), to: .session)
        }
        #expect(try keychain.search(Query()).isEmpty)
    }

    @Test func unknownCollectionIsReported() throws {
        #expect(throws: CofferError.collectionNotFound("nowhere")) {
            try keychain.search(Query(collection: CollectionID("nowhere")!))
        }
        #expect(throws: CofferError.collectionNotFound("default")) {
            try keychain.add(NewItem(label: "l", attributes: [:], secret: secret("s")))
        }
    }

    @Test func collectionIDsDerivedFromLabels() {
        #expect(CollectionID.derived(fromLabel: "My Keys", avoiding: []).rawValue == "My_Keys")
        #expect(CollectionID.derived(fromLabel: "login", avoiding: [.login]).rawValue == "login_2")
        #expect(CollectionID.derived(fromLabel: "", avoiding: []).rawValue == "unnamed")
        let longest = String(repeating: "a", count: 64)
        #expect(CollectionID.derived(fromLabel: longest + "b", avoiding: []).rawValue == longest)
        #expect(CollectionID.derived(fromLabel: longest, avoiding: [CollectionID(longest)!]).rawValue
            == String(repeating: "a", count: 62) + "_2")
        #expect(CollectionID("with-dash") == nil)
        #expect(CollectionID(String(repeating: "a", count: 65)) == nil)
    }
}
