import CofferCrypto
import Testing

/// RFC 7748 section 6.1: Alice's and Bob's keys and the secret they share.
struct X25519Tests {
    let alicePrivate = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
    let alicePublic = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    let bobPrivate = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
    let bobPublic = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
    let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"

    @Test func publicKeysAndTheSharedSecretAreRFC7748s() throws {
        let alice = try SecureBytes(hex(alicePrivate)), bob = try SecureBytes(hex(bobPrivate))
        #expect(hexString(try X25519.publicKey(of: alice)) == alicePublic)
        #expect(hexString(try X25519.publicKey(of: bob)) == bobPublic)
        #expect(hexString(plain(try X25519.sharedSecret(privateKey: alice, peerPublicKey: hex(bobPublic)))) == shared)
        #expect(hexString(plain(try X25519.sharedSecret(privateKey: bob, peerPublicKey: hex(alicePublic)))) == shared)
    }

    @Test func newKeysAgree() throws {
        let a = try X25519.newPrivateKey(), b = try X25519.newPrivateKey()
        let ab = try X25519.sharedSecret(privateKey: a, peerPublicKey: try X25519.publicKey(of: b))
        let ba = try X25519.sharedSecret(privateKey: b, peerPublicKey: try X25519.publicKey(of: a))
        #expect(plain(ab) == plain(ba))
        #expect(try X25519.publicKey(of: a) != X25519.publicKey(of: b))
    }

    @Test func aPeerKeyOfSmallOrderOrTheWrongLengthIsRefused() throws {
        let key = try X25519.newPrivateKey()
        #expect(throws: CryptoError.self) { try X25519.sharedSecret(privateKey: key, peerPublicKey: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try X25519.sharedSecret(privateKey: key, peerPublicKey: [1] + [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try X25519.sharedSecret(privateKey: key, peerPublicKey: [9]) }
    }
}
