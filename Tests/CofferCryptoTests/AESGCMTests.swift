import Testing
import CofferCrypto

/// AES-256-GCM known answers: McGrew/Viega "The Galois/Counter Mode of Operation" test cases
/// 13-16 (256-bit keys; they already use 96-bit IVs).
struct AESGCMTests {
    struct Vector: Sendable, CustomStringConvertible {
        let name: String, key: String, iv: String, plaintext: String, aad: String, ciphertext: String, tag: String
        var description: String { name }
    }

    static let zeroKey = String(repeating: "00", count: 32)
    static let key15 = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
    static let vectors: [Vector] = [
        Vector(name: "TC13", key: zeroKey, iv: "000000000000000000000000", plaintext: "", aad: "",
               ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"),
        Vector(name: "TC14", key: zeroKey, iv: "000000000000000000000000",
               plaintext: "00000000000000000000000000000000", aad: "",
               ciphertext: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919"),
        Vector(name: "TC15", key: key15, iv: "cafebabefacedbaddecaf888",
               plaintext: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                   + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
               aad: "",
               ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                   + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
               tag: "b094dac5d93471bdec1a502270e3cc6c"),
        Vector(name: "TC16", key: key15, iv: "cafebabefacedbaddecaf888",
               plaintext: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                   + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
               aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
               ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                   + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
               tag: "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test(arguments: vectors)
    func knownAnswer(_ v: Vector) throws {
        let key = try SecureBytes(hex(v.key))
        let sealed = try AESGCM.seal(hex(v.plaintext), key: key, nonce: hex(v.iv), aad: hex(v.aad))
        #expect(hexString(sealed) == v.ciphertext + v.tag)
        let sealedFromSecure = try AESGCM.seal(try SecureBytes(hex(v.plaintext)), key: key,
                                               nonce: hex(v.iv), aad: hex(v.aad))
        #expect(sealedFromSecure == sealed)
        let opened = try AESGCM.open(sealed[...], key: key, nonce: hex(v.iv), aad: hex(v.aad))
        #expect(plain(opened) == hex(v.plaintext))
    }

    /// Associated data given in two pieces authenticates as the joined data does, wherever it
    /// is split (inside a 16-byte block too); pieces that join to other data do not.
    @Test func associatedDataInTwoPiecesIsTheJoinedData() throws {
        let key = try AESGCMKey(try SecureBytes(Array(repeating: 9, count: 32)))
        let nonce = Random.nonce(12)
        let aad = (0..<45).map { UInt8($0) }
        let box = try key.seal(Array("in two pieces".utf8), nonce: nonce, aad: aad)
        let file = [0xAA] + nonce + [0xBB]   // the nonce read where it lies
        for split in [0, 1, 15, 16, 17, 32, 44, 45] {
            let opened = try key.open(box[...], nonce: file[1..<13], aad: aad[..<split], aad[split...])
            #expect(opened.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } == "in two pieces", "split at \(split)")
        }
        #expect(throws: CryptoError.authenticationFailed) {
            _ = try key.open(box[...], nonce: file[1..<13], aad: aad[..<20], aad[21...])
        }
        #expect(throws: CryptoError.invalidInput("GCM nonce must be 12 bytes, got 11")) {
            _ = try key.open(box[...], nonce: file[1..<12], aad: aad[...], [])
        }
    }

    /// One key object seals and opens many messages: each call starts from its own nonce and
    /// associated data, whatever the calls before it did (including a failed open).
    @Test func keyObjectIsReusableAcrossMessages() throws {
        let key = try AESGCMKey(try SecureBytes(Array(repeating: 7, count: 32)))
        var sealed: [([UInt8], [UInt8], [UInt8])] = []
        for n in 0..<20 {
            let nonce = Random.nonce(12)
            let aad = Array("record \(n)".utf8)
            sealed.append((try key.seal(Array("secret number \(n)".utf8), nonce: nonce, aad: aad), nonce, aad))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            _ = try key.open(sealed[0].0[...], nonce: sealed[1].1, aad: sealed[0].2)
        }
        for (n, (box, nonce, aad)) in sealed.enumerated().reversed() {
            let opened = try key.open(box[...], nonce: nonce, aad: aad)
            #expect(opened.withUnprotectedCopy { String(decoding: $0, as: UTF8.self) } == "secret number \(n)")
            // The same result as a one-shot call with the same key bytes.
            #expect(try AESGCM.seal(Array("secret number \(n)".utf8), key: try SecureBytes(Array(repeating: 7, count: 32)),
                                    nonce: nonce, aad: aad) == box)
        }
    }

    @Test func tamperedTagIsRejected() throws {
        let v = Self.vectors[3]
        let key = try SecureBytes(hex(v.key))
        var sealed = hex(v.ciphertext + v.tag)
        sealed[sealed.count - 1] ^= 0x01
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed[...], key: key, nonce: hex(v.iv), aad: hex(v.aad))
        }
    }

    @Test func tamperedCiphertextIsRejected() throws {
        let v = Self.vectors[2]
        let key = try SecureBytes(hex(v.key))
        var sealed = hex(v.ciphertext + v.tag)
        sealed[0] ^= 0x80
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed[...], key: key, nonce: hex(v.iv), aad: [])
        }
    }

    @Test func wrongAADIsRejected() throws {
        let v = Self.vectors[3]
        let key = try SecureBytes(hex(v.key))
        let sealed = hex(v.ciphertext + v.tag)
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed[...], key: key, nonce: hex(v.iv), aad: hex("feedface"))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed[...], key: key, nonce: hex(v.iv), aad: [])
        }
    }

    @Test func wrongKeyIsRejected() throws {
        let key = try Random.secureBytes(AESGCM.keyLength)
        let other = try Random.secureBytes(AESGCM.keyLength)
        let nonce = Random.nonce(AESGCM.nonceLength)
        let sealed = try AESGCM.seal(Array("secret".utf8), key: key, nonce: nonce, aad: [1, 2])
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed[...], key: other, nonce: nonce, aad: [1, 2])
        }
    }

    @Test func openWorksOnASliceWithNonZeroStart() throws {
        let key = try Random.secureBytes(32)
        let nonce = Random.nonce(12)
        let sealed = try AESGCM.seal(Array("payload".utf8), key: key, nonce: nonce, aad: [])
        let framed = [0xAA, 0xBB] + sealed + [0xCC]
        let opened = try AESGCM.open(framed[2..<(2 + sealed.count)], key: key, nonce: nonce, aad: [])
        #expect(plain(opened) == Array("payload".utf8))
    }

    @Test func badLengthsAreInvalidInput() throws {
        let key = try SecureBytes(count: 32)
        let shortKey = try SecureBytes(count: 16)
        #expect(throws: CryptoError.self) { try AESGCM.seal([1], key: shortKey, nonce: Array(repeating: 0, count: 12), aad: []) }
        #expect(throws: CryptoError.self) { try AESGCM.seal([1], key: key, nonce: Array(repeating: 0, count: 16), aad: []) }
        do {
            _ = try AESGCM.open([1, 2, 3][...], key: key, nonce: Array(repeating: 0, count: 12), aad: [])
            Issue.record("a sealed box shorter than the tag was accepted")
        } catch CryptoError.invalidInput {
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
