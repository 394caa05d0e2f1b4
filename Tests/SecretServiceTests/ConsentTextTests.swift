@testable import SecretService
import Testing

/// What a consent dialog shows of text other programs wrote (labels, names).
@Suite struct ConsentTextTests {
    @Test func controlLineBreakingAndBidiCharactersAreShownAsQuestionMarks() {
        #expect(AccessGate.clean("safe\nto allow") == "safe?to allow")
        #expect(AccessGate.clean("a\u{202E}txt.exe") == "a?txt.exe")
        #expect(AccessGate.clean("x\u{2028}y\u{2066}z\u{200F}") == "x?y?z?")
        #expect(AccessGate.clean("Ünïcode ✓ 🔑") == "Ünïcode ✓ 🔑")
    }

    @Test func longTextIsShortenedButAnApplicationIsShownWhole() {
        let long = String(repeating: "a", count: 200)
        #expect(AccessGate.clean(long) == String(repeating: "a", count: 79) + "…")
        #expect(AccessGate.clean(long, limit: .max) == long)
    }
}
