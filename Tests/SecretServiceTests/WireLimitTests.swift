import CofferCore
import SecretServiceProtocol
import Testing

/// The protocol module states the largest secret the server reads off the bus without depending
/// on the store; it must be the store's own limit, plus one block of padding for a DH session.
struct WireLimitTests {
    @Test func theLargestSecretOnTheWireIsTheLargestTheStoreKeeps() {
        #expect(WireSecret.maxSecretBytes == Limits.maxSecretBytes)
        #expect(WireSecret.secretLimit == Limits.maxSecretBytes + 16)
    }
}
