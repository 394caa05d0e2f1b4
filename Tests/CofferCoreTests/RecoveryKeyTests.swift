import CofferCore
import CofferCrypto
import Testing

/// A recovery key is shown as 8 groups of 4 base32 characters and read back however it is
/// typed; a mistyped or missing character is caught by its check, before it is tried.
struct RecoveryKeyTests {
    func typed(_ text: String) throws -> SecureBytes { try SecureBytes(Array(text.utf8)) }
    func shown(_ key: RecoveryKey) throws -> String { String(decoding: try key.text().view, as: UTF8.self) }

    @Test func itIsShownInEightGroupsOfFourAndReadBackHoweverTyped() throws {
        let key = try RecoveryKey.generate()
        let text = try shown(key)
        let groups = text.split(separator: "-")
        #expect(groups.count == 8 && groups.allSatisfy { $0.count == 4 }, "\(text)")
        #expect(text.allSatisfy { $0 == "-" || ("A"..."Z").contains($0) || ("2"..."7").contains($0) })
        for variant in [text, text.lowercased(), String(text.map { $0 == "-" ? " " : $0 }),
                        "  " + String(text.filter { $0 != "-" }) + "\n"] {
            let back = try RecoveryKey(typed: typed(variant))
            #expect(back.bytes.withUnprotectedCopy { $0 } == key.bytes.withUnprotectedCopy { $0 }, "\(variant)")
        }
        #expect(key.bytes.count == RecoveryKey.keyLength)
    }

    @Test func aMistypedCharacterIsCaughtByTheCheck() throws {
        let text = Array(try shown(try RecoveryKey.generate()))
        for position in [0, 13, text.count - 1] where text[position] != "-" {
            var wrong = text
            wrong[position] = wrong[position] == "A" ? "B" : "A"
            #expect(throws: CofferError.self) { try RecoveryKey(typed: typed(String(wrong))) }
        }
    }

    @Test func whatIsNotAKeyGetsAReason() throws {
        // "=" is base32 padding, which decodes to nothing: 31 symbols and "=" are 19 bytes.
        for text in [String(repeating: "A", count: 31) + "=", String(repeating: "A", count: 29) + "===", "", "ABCD-EFGH", "ABCD-EFGH-ABCD-EFGH-ABCD-EFGH-ABCD-EFG1", "ABCD-EFGH-ABCD-EFGH-ABCD-EFGH-ABCD-EFGHI"] {
            #expect { try RecoveryKey(typed: typed(text)) } throws: { error in
                guard case CofferError.invalidArgument(let why) = error else { return false }
                return why.contains("recovery key")
            }
        }
    }
}
