import Testing
import CofferCrypto

/// The dh-ietf1024-sha256-aes128-cbc-pkcs7 vector of spec section 4.2 (x = 5, y = 0x10032).
struct SecretServiceTransferTests {
    static let serverPublic = hex("""
        bca4bfe869766baa98b7050dd2b13f9f7ab13e7928bdac3574675d088bf7a604
        9534909932007ba63b0d192c876b1dc88e9c1e98cd34345096b498c7340953b7
        166a37b7be2d5b2fc8c47c1ae0c5ac6c5baceae697f7fcce741057153b8ed40c
        1c5b7e567aff076e4c368d8f769689813ab99580b7add2c287f8b4772f331c88
        """)
    static let sharedPadded = hex("""
        00099e8d2fb10c385236b65078982663822e667999f208157e0880ae5bd52264
        459f5f2b1425f37a2baa356b921f198c9bec900df5220253e9112662f323bc7e
        169eca1ae973e972c89a8715fdb253b52afc43b653fee149cf52440b142733db
        e8c3ef2ab810d7c98484fcfea1c890de6a7c8b95b304762d361b2b388aeb8447
        """)
    static let aesKey = hex("91b40f086488887d5e27e4181f1ccbfa")
    static let iv = hex("000102030405060708090a0b0c0d0e0f")
    static let prime = hex("""
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74
        020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437
        4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """)

    @Test func dhPublicKeysAndSharedSecretMatchTheVector() throws {
        let client = try DHKeyPair(privateKey: [5])
        let server = try DHKeyPair(privateKey: [0x01, 0x00, 0x32])
        #expect(client.publicKey == [UInt8](repeating: 0, count: 127) + [0x20])
        #expect(server.publicKey == Self.serverPublic)
        // The client sends its minimal encoding (one byte), the server its 128 bytes.
        let s1 = try server.sharedSecret(peerPublicKey: [0x20])
        let s2 = try client.sharedSecret(peerPublicKey: server.publicKey)
        #expect(plain(s1) == Self.sharedPadded)
        #expect(plain(s2) == Self.sharedPadded)
        #expect(s1.count == 128)
    }

    @Test func transferKeyUsesThePaddedSecret() throws {
        let key = try SecretServiceKey.derive(sharedSecret: try SecureBytes(Self.sharedPadded))
        #expect(plain(key) == Self.aesKey)
        // The unpadded (127-byte) secret is refused rather than silently giving the wrong key.
        #expect(throws: CryptoError.self) {
            try SecretServiceKey.derive(sharedSecret: try SecureBytes(Array(Self.sharedPadded.dropFirst())))
        }
    }

    @Test func aes128CBCVectors() throws {
        let key = try SecureBytes(Self.aesKey)
        let hunter2 = try AES128CBC.encrypt(try SecureBytes(Array("hunter2".utf8)), key: key, iv: Self.iv)
        #expect(hexString(hunter2) == "dfd427e1189acf458791f8cff7be7994")
        let sixteen = try AES128CBC.encrypt(try SecureBytes(Array("0123456789abcdef".utf8)), key: key, iv: Self.iv)
        #expect(hexString(sixteen) == "54295420b9c319a8ed0d99d0b896831b77c00d8c9a774767742048f17bd2cd0a")
        #expect(plain(try AES128CBC.decrypt(hunter2, key: key, iv: Self.iv)) == Array("hunter2".utf8))
        #expect(plain(try AES128CBC.decrypt(sixteen, key: key, iv: Self.iv)) == Array("0123456789abcdef".utf8))
    }

    @Test func emptyPlaintextIsOneBlockOfPadding() throws {
        let key = try SecureBytes(Self.aesKey)
        let ciphertext = try AES128CBC.encrypt(try SecureBytes(count: 0), key: key, iv: Self.iv)
        #expect(ciphertext.count == 16)
        // Decrypting without removing padding: undo CBC by hand with a zero-IV check instead.
        let roundTrip = try AES128CBC.decrypt(ciphertext, key: key, iv: Self.iv)
        #expect(roundTrip.isEmpty)
        // The padding block is sixteen 0x10 bytes: encrypting them as data gives the same first block.
        let asData = try AES128CBC.encrypt(try SecureBytes([UInt8](repeating: 0x10, count: 16)), key: key, iv: Self.iv)
        #expect(Array(asData.prefix(16)) == ciphertext)
    }

    @Test(arguments: [0, 1, 15, 16, 17, 31, 32, 33, 1000])
    func roundTrip(length: Int) throws {
        let key = try Random.secureBytes(16)
        let iv = Random.bytes(16)
        let message = try SecureBytes(Random.bytes(length))
        let ciphertext = try AES128CBC.encrypt(message, key: key, iv: iv)
        #expect(ciphertext.count == (length / 16 + 1) * 16)
        let back = try AES128CBC.decrypt(ciphertext, key: key, iv: iv)
        #expect(back.constantTimeEquals(message))
    }

    /// Encrypts a raw 16-byte block with no padding handling, by choosing the plaintext so that
    /// its last block after PKCS#7 is what we want: returns the first block of encrypt(block).
    private func rawBlockCiphertext(_ block: [UInt8], key: SecureBytes) throws -> [UInt8] {
        Array(try AES128CBC.encrypt(try SecureBytes(block), key: key, iv: Self.iv).prefix(16))
    }

    @Test func badPaddingIsRejected() throws {
        let key = try SecureBytes(Self.aesKey)
        let badBlocks: [[UInt8]] = [
            [UInt8](repeating: 0x41, count: 15) + [0x00],         // n = 0
            [UInt8](repeating: 0x41, count: 15) + [0x11],         // n = 17
            [UInt8](repeating: 0x41, count: 14) + [0x01, 0x02],   // n = 2 but byte before is 1
            [UInt8](repeating: 0x10, count: 15) + [0x0f] + [],    // n = 15, one byte is 0x10
        ]
        for block in badBlocks {
            let ciphertext = try rawBlockCiphertext(block, key: key)
            do {
                _ = try AES128CBC.decrypt(ciphertext, key: key, iv: Self.iv)
                Issue.record("bad padding \(block.last!) accepted")
            } catch CryptoError.invalidInput(let message) {
                #expect(message.contains("padding"))
            }
        }
        // Sanity check of the helper: a well-padded block is accepted.
        let good = try rawBlockCiphertext([UInt8](repeating: 0x41, count: 14) + [0x02, 0x02], key: key)
        #expect(plain(try AES128CBC.decrypt(good, key: key, iv: Self.iv)) == [UInt8](repeating: 0x41, count: 14))
    }

    @Test func badIVAndLengthsAreRejected() throws {
        let key = try SecureBytes(Self.aesKey)
        let good = try AES128CBC.encrypt(try SecureBytes([1, 2, 3]), key: key, iv: Self.iv)
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt(good, key: key, iv: Array(Self.iv.prefix(15))) }
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt(good, key: key, iv: Self.iv + [0]) }
        #expect(throws: CryptoError.self) { try AES128CBC.encrypt(try SecureBytes([1]), key: key, iv: []) }
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt([], key: key, iv: Self.iv) }
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt(good + [0], key: key, iv: Self.iv) }
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt(Array(good.prefix(15)), key: key, iv: Self.iv) }
        #expect(throws: CryptoError.self) { try AES128CBC.decrypt(good, key: try SecureBytes(count: 32), iv: Self.iv) }
    }

    @Test func degeneratePeerKeysAreRejected() throws {
        let pair = try DHKeyPair()
        var pMinusOne = Self.prime; pMinusOne[127] -= 1
        var pPlusOne = Self.prime; pPlusOne[127] = 0; pPlusOne[126] = 0 // p+1 overflows: use p-0xFF... instead
        pPlusOne = [0x01] + [UInt8](repeating: 0, count: 128)           // 2^1024 > p
        let degenerate: [[UInt8]] = [
            [], [0], [0, 0, 0], [1], [0, 1], pMinusOne, Self.prime, pPlusOne,
            [UInt8](repeating: 0xFF, count: 128), [UInt8](repeating: 0x01, count: 129),
        ]
        for key in degenerate {
            do {
                _ = try pair.sharedSecret(peerPublicKey: key)
                Issue.record("degenerate peer key of \(key.count) bytes accepted")
            } catch CryptoError.invalidInput {
            }
        }
    }

    @Test func peerKeysWithLeadingZerosAndBoundaryValuesAreAccepted() throws {
        let server = try DHKeyPair(privateKey: [0x01, 0x00, 0x32])
        let padded = try server.sharedSecret(peerPublicKey: [UInt8](repeating: 0, count: 127) + [0x20])
        let longer = try server.sharedSecret(peerPublicKey: [UInt8](repeating: 0, count: 300) + [0x20])
        #expect(plain(padded) == Self.sharedPadded)
        #expect(plain(longer) == Self.sharedPadded)
        var pMinusTwo = Self.prime; pMinusTwo[127] -= 2
        _ = try server.sharedSecret(peerPublicKey: pMinusTwo)
        _ = try server.sharedSecret(peerPublicKey: [2])
    }

    @Test func randomKeyPairsAgree() throws {
        let a = try DHKeyPair(), b = try DHKeyPair()
        #expect(a.publicKey.count == 128 && b.publicKey.count == 128)
        #expect(a.publicKey != b.publicKey)
        let sa = try a.sharedSecret(peerPublicKey: b.publicKey)
        let sb = try b.sharedSecret(peerPublicKey: a.publicKey)
        #expect(sa.constantTimeEquals(sb))
        let ka = try SecretServiceKey.derive(sharedSecret: sa)
        let ciphertext = try AES128CBC.encrypt(try SecureBytes(Array("s3cret".utf8)), key: ka,
                                               iv: Self.iv)
        let kb = try SecretServiceKey.derive(sharedSecret: sb)
        #expect(plain(try AES128CBC.decrypt(ciphertext, key: kb, iv: Self.iv)) == Array("s3cret".utf8))
    }

    @Test func invalidPrivateKeysAreRejected() {
        #expect(throws: CryptoError.self) { try DHKeyPair(privateKey: []) }
        #expect(throws: CryptoError.self) { try DHKeyPair(privateKey: [0, 1]) }
        #expect(throws: CryptoError.self) { try DHKeyPair(privateKey: [UInt8](repeating: 1, count: 129)) }
    }
}
