import CGcrypt

/// AES-128-CBC with PKCS#7 padding (Secret Service DH sessions): one-shot calls. A session
/// that transfers many secrets keeps an `AES128CBCKey`.
public enum AES128CBC {
    public static let blockLength = 16, keyLength = 16

    /// Pads `plaintext` (PKCS#7, always 1...16 padding bytes) and encrypts it.
    public static func encrypt(_ plaintext: SecureBytes, key: SecureBytes, iv: [UInt8]) throws -> [UInt8] {
        let sealed = try AES128CBCKey(key).seal(plaintext, iv: iv)
        return sealed.unprotectedArray(0..<sealed.count)   // ciphertext: nothing secret is copied out
    }

    /// Checks: iv 16 bytes, ciphertext non-empty multiple of 16, padding byte n in 1...16 and all
    /// n bytes equal n -> else .invalidInput("bad padding" etc).
    public static func decrypt(_ ciphertext: [UInt8], key: SecureBytes, iv: [UInt8]) throws -> SecureBytes {
        try AES128CBCKey(key).decrypt(ciphertext, iv: iv)
    }
}

/// An AES-128-CBC key (a Secret Service session's): its 16 bytes in secure memory. Each call
/// opens a cipher handle for its own duration, so an idle session holds 32 bytes of the secure
/// pool rather than a libgcrypt handle of a few KiB, and calls from several threads need no lock.
public final class AES128CBCKey: Sendable {
    private let key: SecureBytes
    private let blockLength = AES128CBC.blockLength

    public init(_ key: SecureBytes) throws {
        guard key.count == AES128CBC.keyLength else {
            throw CryptoError.invalidInput("AES-128 key must be \(AES128CBC.keyLength) bytes, got \(key.count)")
        }
        self.key = try key.slice(0..<key.count)
    }

    private func cipher() throws -> CipherHandle {
        try CipherHandle(algorithm: COFFER_GCRY_CIPHER_AES128, mode: COFFER_GCRY_CIPHER_MODE_CBC, key: key)
    }

    /// Pads `plaintext` (PKCS#7, always 1...16 padding bytes) and encrypts it in one new secure buffer, the only one made:
    /// what a Secret Service message carries (as `SecureBytes`, as it carries a plain secret).
    public func seal(_ plaintext: SecureBytes, iv: [UInt8]) throws -> SecureBytes {
        try seal(plaintext, iv: iv, with: try cipher())
    }

    /// An encryptor that keeps one cipher handle open for all it encrypts (the many secrets of
    /// one reply); let it go when done.
    public func encryptor() throws -> Encryptor {
        Encryptor(key: self, cipher: try cipher())
    }

    /// Seals as `seal(_:iv:)` does, with a cipher handle it keeps (see `encryptor()`).
    public final class Encryptor {
        private let key: AES128CBCKey
        private let cipher: CipherHandle

        fileprivate init(key: AES128CBCKey, cipher: CipherHandle) {
            self.key = key
            self.cipher = cipher
        }

        /// As `AES128CBCKey.seal(_:iv:)`.
        public func seal(_ plaintext: SecureBytes, iv: [UInt8]) throws -> SecureBytes {
            try key.seal(plaintext, iv: iv, with: cipher)
        }
    }

    fileprivate func seal(_ plaintext: SecureBytes, iv: [UInt8], with cipher: CipherHandle) throws -> SecureBytes {
        try Self.check(iv: iv)
        let padLength = blockLength - plaintext.count % blockLength
        let sealed = try SecureBytes(capacity: plaintext.count + padLength)
        try sealed.append(plaintext)
        for _ in 0..<padLength { try sealed.append(UInt8(padLength)) }
        try iv.withUnsafeBytes { try cipher.setIV($0) }
        try sealed.withUnsafeMutableBytes { try cipher.encryptInPlace($0) }
        return sealed
    }

    /// Encrypts `plaintext`, whose length must be a multiple of the block length already (for
    /// formats that pad in their own way: gnome-keyring's files pad with zero bytes).
    public func encryptBlocks(_ plaintext: SecureBytes, iv: [UInt8]) throws -> [UInt8] {
        try encryptBlocks(plaintext, iv: iv, with: try cipher())
    }

    private func encryptBlocks(_ plaintext: SecureBytes, iv: [UInt8], with cipher: CipherHandle) throws -> [UInt8] {
        try Self.check(iv: iv)
        guard plaintext.count % blockLength == 0 else {
            throw CryptoError.invalidInput("plaintext length \(plaintext.count) is not a multiple of \(blockLength)")
        }
        var result = [UInt8](repeating: 0, count: plaintext.count)
        try iv.withUnsafeBytes { try cipher.setIV($0) }
        try result.withUnsafeMutableBytes { out in
            try plaintext.withUnsafeBytes { try cipher.encrypt(into: out, from: $0) }
        }
        return result
    }

    /// Checks: iv 16 bytes, ciphertext non-empty multiple of 16, padding byte n in 1...16 and all
    /// n bytes equal n -> else .invalidInput("bad padding" etc).
    public func decrypt(_ ciphertext: [UInt8], iv: [UInt8]) throws -> SecureBytes {
        try removePadding(try ciphertext.withUnsafeBytes { try decryptBlocks($0, iv: iv) })
    }

    /// As `decrypt(_:iv:)`, for a ciphertext read into secure memory.
    public func decrypt(_ ciphertext: SecureBytes, iv: [UInt8]) throws -> SecureBytes {
        try removePadding(try ciphertext.withUnsafeBytes { try decryptBlocks($0, iv: iv) })
    }

    /// Decrypts whole blocks and leaves any padding in place (see `encryptBlocks`).
    public func decryptBlocks(_ ciphertext: ArraySlice<UInt8>, iv: [UInt8]) throws -> SecureBytes {
        try ciphertext.withUnsafeBytes { try decryptBlocks($0, iv: iv) }
    }

    private func decryptBlocks(_ ciphertext: UnsafeRawBufferPointer, iv: [UInt8]) throws -> SecureBytes {
        try Self.check(iv: iv)
        guard !ciphertext.isEmpty, ciphertext.count % blockLength == 0 else {
            throw CryptoError.invalidInput(
                "ciphertext length \(ciphertext.count) is not a non-zero multiple of \(blockLength)")
        }
        let output = try SecureBytes(count: ciphertext.count)
        let cipher = try cipher()
        try iv.withUnsafeBytes { try cipher.setIV($0) }
        try output.withUnsafeMutableBytes { try cipher.decrypt(into: $0, from: ciphertext) }
        return output
    }

    /// `output` without its PKCS#7 padding; wiped and refused when the padding is malformed.
    private func removePadding(_ output: SecureBytes) throws -> SecureBytes {
        guard let unpadded = paddingStart(output) else {
            output.removeAll()
            throw CryptoError.invalidInput("bad padding")
        }
        output.truncate(to: unpadded)
        return output
    }

    /// The length without PKCS#7 padding, or nil if the padding is malformed. Always examines
    /// all of the last block (no early exit on the first wrong byte).
    private func paddingStart(_ block: SecureBytes) -> Int? {
        let count = block.count
        let n = block[count - 1]
        // bad != 0 if n == 0 or n > 16.
        var bad: UInt8 = (n == 0 ? 1 : 0) | (n > UInt8(blockLength) ? 1 : 0)
        for i in 1...blockLength {
            let byte = block[count - i]
            // Inside the padding (i <= n) every byte must equal n.
            let inside: UInt8 = UInt8(i) <= n ? 0xFF : 0
            bad |= (byte ^ n) & inside
        }
        return bad == 0 ? count - Int(n) : nil
    }

    private static func check(iv: [UInt8]) throws {
        guard iv.count == AES128CBC.blockLength else {
            throw CryptoError.invalidInput("IV must be \(AES128CBC.blockLength) bytes, got \(iv.count)")
        }
    }
}
