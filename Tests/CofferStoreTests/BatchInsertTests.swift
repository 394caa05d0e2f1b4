import CofferCore
import CofferCrypto
import CofferStore
import Foundation
import Testing

/// `Keychain.insertAll`: many items in one atomic commit, keeping the times they came with (what
/// an import needs).
struct BatchInsertTests {
    static func item(_ n: Int, label: String? = nil, times: (created: UInt64, modified: UInt64)? = nil) throws -> NewItem {
        NewItem(label: label ?? "item \(n)", attributes: ["n": "\(n)"],
                secret: Secret(bytes: try SecureBytes(Array("secret \(n)".utf8))), times: times)
    }

    @Test func allItemsArriveWithTheirTimesAndSurviveAReopen() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let id = try keychain.createCollection(label: "Import", password: try SecureBytes(Array("pw".utf8)))
        let items = try (0..<50).map { try Self.item($0, times: (1_600_000_000 + UInt64($0), 1_650_000_000 + UInt64($0))) }
        let references = try keychain.insertAll(items, into: id)
        #expect(references.count == 50 && Set(references).count == 50)

        let reopened = try fixture.keychain()
        try reopened.unlock(id, password: try SecureBytes(Array("pw".utf8)))
        for (n, reference) in references.enumerated() {
            let metadata = try reopened.metadata(of: reference)
            #expect(metadata.label == "item \(n)")
            #expect(metadata.created == 1_600_000_000 + UInt64(n) && metadata.modified == 1_650_000_000 + UInt64(n))
            #expect(try reopened.secret(of: reference).bytes == (try SecureBytes(Array("secret \(n)".utf8))))
        }
        // Without times, an item is made now.
        let now = UInt64(Date().timeIntervalSince1970)
        let fresh = try reopened.insertAll([try Self.item(99)], into: id)[0]
        #expect(try reopened.metadata(of: fresh).created >= now - 5)
    }

    /// One bad item: nothing of the batch is added.
    @Test func aBadItemAddsNothing() throws {
        let fixture = try StoreFixture()
        let keychain = try fixture.keychain()
        let id = try keychain.createCollection(label: "Import", password: try SecureBytes(Array("pw".utf8)))
        let tooLong = String(repeating: "x", count: Limits.maxLabelBytes + 1)
        #expect(throws: CofferError.self) {
            try keychain.insertAll([try Self.item(1), try Self.item(2, label: tooLong), try Self.item(3)], into: id)
        }
        #expect(try keychain.info(id).itemCount == 0)
        try keychain.lock(id)
        #expect(throws: CofferError.locked(id.rawValue)) { try keychain.insertAll([try Self.item(1)], into: id) }
    }
}
