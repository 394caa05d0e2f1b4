import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// Access rules and item creators, kept encrypted in the collection file.
@Suite struct AccessPersistenceTests {
    let python = Application(kind: .executable, name: "/usr/bin/python3")!
    let tool = Application(kind: .executable, name: "/usr/bin/secret-tool")!
    let app = Application(kind: .flatpak, name: "org.example.App")!

    /// A grant says what it allows; rules written before grants did (format version 1) read
    /// back as read grants.
    @Test func grantRightsAreKeptAndOldRulesGrantReading() throws {
        let rules = CollectionAccess(policy: .strict, grants: [
            AccessGrant(application: python, item: 3, rights: .change, granted: 5),
            AccessGrant(application: tool, item: nil, rights: .all, granted: 6),
        ])
        let encoded = AccessCoding.encode(rules)
        #expect(AccessCoding.decode(encoded) == rules)
        #expect(rules.decide(python, .change, item: 3, creator: nil, at: 7) == .allowed(.granted))
        #expect(rules.decide(python, .read, item: 3, creator: nil, at: 7) == .denied)
        // Version 1: the same without the rights byte (here after the one grant's digest).
        var old = AccessCoding.encode(CollectionAccess(policy: .ask, grants: [AccessGrant(application: tool, item: 1, rights: .all, granted: 6)]))
        old[0] = 1
        old.removeLast()
        #expect(AccessCoding.decode(old)?.grants.map(\.rights) == [.read])
        // Rights that allow nothing, or more than Coffer knows, are damage.
        for bad: UInt8 in [0, 4, 0xFF] {
            var damaged = encoded
            damaged[damaged.count - 1] = bad
            #expect(AccessCoding.decode(damaged) == nil, "rights \(bad)")
        }
    }

    @Test func newCollectionsAskAndCreatorsAndGrantsSurviveReopeningCompactionAndAPasswordChange() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        #expect(try keychain.access(of: work) == CollectionAccess(policy: .ask))
        let made = try keychain.add(NewItem(label: "Token", attributes: ["n": "1"], secret: secret("t"), creator: python), to: work)
        let other = try keychain.add(NewItem(label: "Other", attributes: ["n": "2"], secret: secret("o")), to: work)
        try keychain.updateAccess(of: work) { access in
            access.add(AccessGrant(application: tool, item: made.item, granted: 10, expires: 4_000_000_000), now: 10)
            access.add(AccessGrant(application: app, item: nil, granted: 11, executableDigest: Array(repeating: 7, count: 32)), now: 11)
        }
        // Replacing an item keeps who created it.
        try keychain.add(NewItem(label: "Token 2", attributes: ["n": "1"], secret: secret("t2"), creator: tool), to: work,
                         onDuplicate: .replace)

        func check(_ keychain: Keychain) throws {
            #expect(try keychain.metadata(of: made).creator == python)
            #expect(try keychain.metadata(of: made).label == "Token 2")
            #expect(try keychain.metadata(of: other).creator == nil)
            let access = try keychain.access(of: work)
            #expect(access.policy == .ask)
            #expect(access.grants.count == 2)
            #expect(access.grants.first { $0.application == tool } == AccessGrant(application: tool, item: made.item, granted: 10,
                                                                                   expires: 4_000_000_000))
            #expect(access.grants.first { $0.application == app }?.executableDigest == Array(repeating: 7, count: 32))
            #expect(decisions(keychain, reads: [made, other], by: python) == [.allowed(.creator), .ask])
            #expect(decisions(keychain, reads: [made, other], by: tool) == [.allowed(.granted), .ask])
        }
        try check(keychain)
        let reopened = try fixture.keychain()
        #expect(throws: CofferError.locked("work")) { try reopened.access(of: work) }
        #expect(decisions(reopened, reads: [made], by: python) == [nil])
        try reopened.unlock(work, password: password("pw"))
        try check(reopened)

        // A rewrite of the file (a password change compacts it) keeps the rules.
        try reopened.changePassword(work, from: password("pw"), to: password("new"))
        let afterChange = try fixture.keychain()
        try afterChange.unlock(work, password: password("new"))
        try check(afterChange)
        // So does a relabel, which writes a new collection record.
        try afterChange.collection(work).setLabel("Work 2")
        try check(try { let k = try fixture.keychain(); try k.unlock(work, password: password("new")); return k }())
    }

    @Test func policiesDecideAsDocumented() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"), policy: .strict)
        let item = try keychain.add(NewItem(label: "T", attributes: [:], secret: secret("t"), creator: python), to: work)
        #expect(decisions(keychain, reads: [item], by: python) == [.allowed(.creator)])
        #expect(decisions(keychain, reads: [item], by: tool) == [.denied])
        try keychain.updateAccess(of: work) { $0.policy = .open }
        #expect(decisions(keychain, reads: [item], by: tool) == [.allowed(.openPolicy)])
        try keychain.updateAccess(of: work) { $0.policy = .ask }
        #expect(decisions(keychain, reads: [item], by: tool) == [.ask])
        // An expired grant counts for nothing; one bound to a binary needs that binary.
        try keychain.updateAccess(of: work) { $0.add(AccessGrant(application: tool, item: nil, granted: 1, expires: 2), now: 1) }
        #expect(decisions(keychain, reads: [item], by: tool) == [.ask])
        let digest = Array(repeating: UInt8(1), count: 32)
        try keychain.updateAccess(of: work) { $0.add(AccessGrant(application: tool, item: nil, granted: 1, executableDigest: digest), now: 1) }
        #expect(decisions(keychain, reads: [item], by: tool, digest: { Array(repeating: 2, count: 32) }) == [.ask])
        #expect(decisions(keychain, reads: [item], by: tool, digest: { digest }) == [.allowed(.granted)])
        try keychain.updateAccess(of: work) { #expect($0.revoke(tool) == 1) }
        #expect(decisions(keychain, reads: [item], by: tool, digest: { digest }) == [.ask])
    }

    /// A batch of reads across collections (interleaved, with a locked one, one that does not
    /// exist, a missing item and a repeat) is decided item by item, in the order asked.
    @Test func aMixedBatchIsDecidedInTheOrderAsked() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let home = CollectionID("home")!
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        try keychain.createCollection(label: "Home", id: home, password: password("pw"))
        let mine = try keychain.add(NewItem(label: "Mine", attributes: ["n": "1"], secret: secret("m"), creator: python), to: work)
        let theirs = try keychain.add(NewItem(label: "Theirs", attributes: ["n": "2"], secret: secret("t")), to: work)
        let atHome = try keychain.add(NewItem(label: "Home", attributes: ["n": "3"], secret: secret("h")), to: home)
        try keychain.lock(home)
        let gone = ItemReference(collection: work, item: theirs.item + 100)
        let nowhere = ItemReference(collection: CollectionID("nowhere")!, item: 1)

        let decided = keychain.decide(.read, of: [theirs, atHome, nowhere, mine, gone, atHome, theirs], by: python)
        #expect(decided == [.decided(.ask, label: "Theirs"), .locked(home), .missing, .decided(.allowed(.creator), label: "Mine"),
                            .missing, .locked(home), .decided(.ask, label: "Theirs")])
    }

    /// Grants of deleted items go at the next change of the rules.
    @Test func grantsOfDeletedItemsAreDropped() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let item = try keychain.add(NewItem(label: "T", attributes: ["n": "1"], secret: secret("t")), to: work)
        try keychain.updateAccess(of: work) { access in
            access.add(AccessGrant(application: tool, item: item.item, granted: 1), now: 1)
            access.add(AccessGrant(application: tool, item: nil, granted: 1), now: 1)
        }
        #expect(try keychain.access(of: work).grants.count == 2)
        try keychain.delete(item)
        let after = try keychain.updateAccess(of: work) { $0.policy = .strict }
        #expect(after.grants == [AccessGrant(application: tool, item: nil, granted: 1)])
    }

    /// Two processes' keychains over one directory: a grant given through one is seen by the other.
    @Test func aGrantWrittenElsewhereIsSeen() throws {
        let fixture = try StoreFixture()
        let daemon = try fixture.keychain()
        try daemon.createCollection(label: "Work", id: work, password: password("pw"))
        let item = try daemon.add(NewItem(label: "T", attributes: [:], secret: secret("t"), creator: python), to: work)
        #expect(decisions(daemon, reads: [item], by: tool) == [.ask])
        let cli = try fixture.keychain()
        try cli.unlock(work, password: password("pw"))
        try cli.updateAccess(of: work) { $0.add(AccessGrant(application: tool, item: item.item, granted: 1), now: 1) }
        #expect(decisions(daemon, reads: [item], by: tool) == [.allowed(.granted)])
    }

    /// Someone who can write the file copies an older collection record (with a grant since
    /// revoked, and the policy before) to its end: it is recognised as older and ignored.
    @Test func anOlderCollectionRecordCopiedToTheEndChangesNothing() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"))
        let item = try keychain.add(NewItem(label: "T", attributes: [:], secret: secret("t"), creator: python), to: work)
        try keychain.updateAccess(of: work) { $0.add(AccessGrant(application: tool, item: nil, granted: 1), now: 1) }
        let withGrant = try fixture.records("work")
        let start = try #require(recordStart(endingAt: withGrant.count, in: withGrant))
        let oldRecord = Array(withGrant[start...])
        try keychain.updateAccess(of: work) { $0.revoke(tool) }
        try keychain.updateAccess(of: work) { $0.policy = .strict }
        try fixture.write(try fixture.records("work") + oldRecord, to: "work")

        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        #expect(try reopened.access(of: work) == CollectionAccess(policy: .strict))
        #expect(decisions(reopened, reads: [item], by: tool) == [.denied])
    }

    /// Bytes that fail verification at the end are set aside at the next change; the record
    /// written then keeps the rules (it used to write none, which reads as `open`).
    @Test func settingADamagedTailAsideKeepsTheRules() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        try keychain.createCollection(label: "Work", id: work, password: password("pw"), policy: .strict)
        let item = try keychain.add(NewItem(label: "T", attributes: ["n": "1"], secret: secret("t"), creator: python), to: work)
        try fixture.write(try fixture.records("work") + Array(repeating: 0x5A, count: 7), to: "work")
        let reopened = try fixture.keychain()
        try reopened.unlock(work, password: password("pw"))
        try reopened.add(NewItem(label: "U", attributes: ["n": "2"], secret: secret("u"), creator: python), to: work)
        let again = try fixture.keychain()
        try again.unlock(work, password: password("pw"))
        #expect(try again.access(of: work).policy == .strict)
        #expect(decisions(again, reads: [item], by: tool) == [.denied])
    }

    /// A collection written before access rules existed (a file from the fuzz corpus, made by
    /// the store at that time) is open, its items have no creator, and it takes rules.
    @Test func aCollectionFromBeforeAccessRulesIsOpen() throws {
        let fixture = try StoreFixture()
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/StoreFileFuzz/store-two-items")
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        try fixture.write(Array(try Data(contentsOf: seed)), to: "login")
        let keychain = try fixture.keychain()
        try keychain.unlock(.login, password: password("fuzz"))
        #expect(try keychain.access(of: .login) == .legacy)
        let items = try keychain.search(Query(collection: .login)).map(\.reference)
        #expect(items.count == 2)
        #expect(try items.allSatisfy { try keychain.metadata(of: $0).creator == nil })
        #expect(decisions(keychain, reads: items, by: tool) == [.allowed(.openPolicy), .allowed(.openPolicy)])
        try keychain.updateAccess(of: .login) { $0.policy = .ask }
        #expect(decisions(keychain, reads: items, by: tool) == [.ask, .ask])
        #expect(try keychain.search(Query(collection: .login, returnSecret: true)).compactMap { text($0.secret) }.sorted() == ["one", "two"])
    }
}

/// The decisions alone (without the labels `decide` also returns).
private func decisions(_ keychain: Keychain, reads references: [ItemReference], by application: Application,
                       digest: () -> [UInt8]? = { nil }) -> [AccessDecision?] {
    keychain.decide(.read, of: references, by: application, digest: digest).map(\.decision)
}
