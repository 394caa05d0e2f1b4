import CofferCrypto
import CofferStore
import Testing

/// The tests' cheap key derivation: asked for by one variable, given only by debug builds (the
/// release refusal is checked on the Debian package's binaries in PackagingTests).
struct TestKeyDerivationTests {
    @Test func withoutTheVariableNewCollectionsGetProductionParameters() throws {
        #expect(try TestKeyDerivation.parameters(environment: [:]) == .default)
        #expect(try TestKeyDerivation.parameters(environment: [TestKeyDerivation.variable: ""]) == .default)
    }

    @Test func aDebugBuildGivesTheTestsCheapParameters() throws {
        #expect(try TestKeyDerivation.parameters(environment: [TestKeyDerivation.variable: "1"]) == .testing)
    }

    @Test func anythingElseIsAnErrorNamingTheVariable() {
        #expect {
            try TestKeyDerivation.parameters(environment: [TestKeyDerivation.variable: "yes"])
        } throws: { "\($0)".contains(TestKeyDerivation.variable) }
    }

}
