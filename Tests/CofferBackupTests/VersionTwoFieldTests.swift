import CofferBackup
import CofferCore
import CofferCrypto
import Testing

/// The fields version 2 added, read from payloads built by hand from the document: as
/// documented when well formed, and refused with a reason when forged.
struct VersionTwoFieldTests {
    static let digest = [UInt8](repeating: 0xAB, count: 32)

    @Test func aHandBuiltPayloadReadsAsDocumented() throws {
        let payload = PayloadBuilder.version2(count: 3) { b in
            b.grant(application: "flatpak:org.gnome.Fractal", item: 1, granted: 100, expiring: 1, expires: 200)
            b.grant(application: "/usr/bin/python3", item: 0xFFFF_FFFF, granted: 101, expiring: 0, expires: 0)
            b.grant(application: "exe:/usr/bin/tool", item: 0, granted: 102, expiring: 0, expires: 0, digest: Self.digest)
        }
        let backup = try payload.read()
        let login = try #require(backup.collections.first)
        #expect(login.items.map(\.creator) == [Application(encoded: "exe:/usr/bin/git"), nil])
        #expect(login.policy == .strict)
        #expect(login.grants == [
            .init(application: Application(encoded: "flatpak:org.gnome.Fractal")!, item: 1, granted: 100, expires: 200),
            .init(application: Application(encoded: "/usr/bin/python3")!, item: nil, granted: 101),
            .init(application: Application(encoded: "/usr/bin/tool")!, item: 0, granted: 102, executableDigest: Self.digest),
        ])
        #expect(backup.aliases == ["default": login.id])
        #expect(try PayloadBuilder.version2(policy: "", count: 0, grants: { _ in }).read().collections[0].policy == nil)
        for policy in AccessPolicy.allCases {
            #expect(try PayloadBuilder.version2(policy: policy.rawValue).read().collections[0].policy == policy)
        }
    }

    /// `payload`, read as a payload of `version`, is refused as damaged, with a message that
    /// contains `words`.
    static func expectRefused(_ payload: PayloadBuilder, version: UInt32 = 2, saying words: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: BackupError.self, sourceLocation: sourceLocation) { try payload.read(version: version) }
        guard case .damaged(let what)? = error else {
            Issue.record("not refused as damaged: \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(what.contains(words), "\(what)", sourceLocation: sourceLocation)
    }

    @Test func forgedFieldsAreRefused() throws {
        Self.expectRefused(.version2(policy: "lenient"), saying: "unknown access policy 'lenient'")
        Self.expectRefused(.version2(policy: "Strict"), saying: "unknown access policy")
        Self.expectRefused(.version2 { $0.grant(item: 2) }, saying: "points at item 2, but the collection has 2 items")
        Self.expectRefused(.version2 { $0.grant(item: 0xFFFF_FFFE) }, saying: "points at item 4294967294")
        Self.expectRefused(.version2 { $0.grant(application: "/usr/bin/tool", digest: [UInt8](repeating: 1, count: 31)) },
                           saying: "31-byte executable digest")
        Self.expectRefused(.version2 { $0.grant(application: "/usr/bin/tool", digest: [UInt8](repeating: 1, count: 33)) },
                           saying: "33-byte executable digest")
        Self.expectRefused(.version2 { $0.grant(application: "python3") }, saying: "invalid application")
        Self.expectRefused(.version2 { $0.grant(application: "") }, saying: "invalid application")
        Self.expectRefused(.version2(creator: "exe:relative/path"), saying: "invalid creator")
        Self.expectRefused(.version2 { $0.grant(expiring: 2) }, saying: "malformed expiry")
        Self.expectRefused(.version2 { $0.grant(expiring: 0, expires: 5) }, saying: "malformed expiry")
        // A count of grants larger than what follows (the aliases are read as grants), and a
        // version 2 header on a version 1 payload.
        Self.expectRefused(.version2(count: 1_000_000), saying: "a grant of collection 'login'")
        let v1 = PayloadBuilder.version1()
        #expect(try v1.read(version: 1).collections[0].items.map(\.label) == ["a"])
        Self.expectRefused(v1, saying: "end too early")
    }

    /// A payload of either version cut anywhere ends too early, and one with a byte more has
    /// data after its contents: both refused, never read in part.
    @Test(arguments: [2, 1] as [UInt32])
    func aPayloadCutShortOrRunningOnIsRefused(version: UInt32) throws {
        let whole = version == 2 ? PayloadBuilder.version2() : PayloadBuilder.version1()
        #expect(try whole.read(version: version).collections.count == 1)
        for length in 0..<whole.bytes.count {
            Self.expectRefused(PayloadBuilder(bytes: Array(whole.bytes.prefix(length))), version: version, saying: "its contents end too early")
        }
        Self.expectRefused(PayloadBuilder(bytes: whole.bytes + [0]), version: version, saying: "unexpected data after its contents")
    }
}
