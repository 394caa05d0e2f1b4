import CofferCore
import Testing

/// An unverified process (one whose executable the service cannot read) is served by the
/// `open` policy like anyone, and by nothing else: not as an item's creator, not by a grant.
@Suite struct UnverifiedAccessTests {
    static let python = Application(kind: .executable, name: "/usr/bin/python3")!
    static let hidden = Application.unverified(commandName: "python3")

    @Test func openServesItLikeAnyone() {
        let access = CollectionAccess(policy: .open)
        #expect(access.decide(Self.hidden, item: 1, creator: Self.python, at: 100) == .allowed(.openPolicy))
    }

    @Test func itNeverOwnsWhatAnUnverifiedProcessMade() {
        // The same name as the creator's: any process may call itself python3.
        for policy in [AccessPolicy.ask, .strict] {
            let access = CollectionAccess(policy: policy)
            #expect(access.decide(Self.hidden, item: 1, creator: Self.hidden, at: 100) == (policy == .ask ? .ask : .denied))
            // And a verified program is not the owner of an item an unverified process made.
            #expect(access.decide(Self.python, item: 1, creator: Self.hidden, at: 100) == (policy == .ask ? .ask : .denied))
        }
    }

    @Test func noGrantCoversIt() {
        let access = CollectionAccess(policy: .strict, grants: [AccessGrant(application: Self.hidden, item: nil, granted: 0)])
        #expect(access.decide(Self.hidden, item: 1, creator: nil, at: 100) == .denied)
    }

    @Test func itsNameIsCleanedAndEncodedApart() {
        let odd = Application.unverified(commandName: "bad\u{1B}[2Jname\n")
        #expect(odd.name == "bad?[2Jname?")
        #expect(!odd.isVerified)
        #expect(Application.unverified(commandName: "").name == "?")
        #expect(Application(encoded: Self.hidden.encoded) == Self.hidden)
        #expect(Self.hidden.encoded == "unverified:python3")
        #expect(Self.hidden.description == "an unverified process calling itself 'python3'")
        #expect(Self.python.isVerified)
    }
}
