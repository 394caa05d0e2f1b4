import CofferCrypto
import SystemKit

/// A recovery key: 128 random bits that open a collection whatever its password (a key slot of
/// its own, see `KeySlot`), for when the password is forgotten.
///
/// It is shown once, as 32 base32 characters (A–Z, 2–7) in 8 groups of 4: the 16 key bytes and
/// 4 check bytes (the start of the SHA-256 of the key), so that a mistyped character is caught
/// before it counts as a guess. Upper or lower case, spaces and dashes are all accepted back.
/// The key and every text of it live in secure memory.
public struct RecoveryKey: Sendable {
    /// Bytes of key: 128 bits.
    public static let keyLength = 16
    static let checkLength = 4
    /// Characters in all (without the dashes between groups).
    static let textLength = (keyLength + checkLength) * 8 / 5
    static let groupLength = 4

    /// The key bytes.
    public let bytes: SecureBytes

    /// A new random key.
    public static func generate() throws(CofferError) -> RecoveryKey {
        RecoveryKey(bytes: try CofferError.catching { try Random.secureBytes(keyLength) })
    }

    private init(bytes: SecureBytes) {
        self.bytes = bytes
    }

    /// The key a person typed (its groups, in either case, with spaces or dashes, surrounding
    /// white space ignored); `invalidArgument` saying what is wrong when it is not one.
    public init(typed text: SecureBytes) throws(CofferError) {
        let decoded = try CofferError.catching { try SecureBytes(capacity: Self.keyLength + Self.checkLength + 5) }
        let trimmed = text.view.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let symbols = trimmed.reversed().drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.count
        let typed = trimmed.prefix(symbols)
        // Counted in place: a filtered copy would put the key in memory that is not wiped.
        let characters = typed.reduce(0) { $0 + ($1 != 0x20 && $1 != UInt8(ascii: "-") ? 1 : 0) }
        guard characters == Self.textLength else {
            throw .invalidArgument("a recovery key is \(Self.textLength) letters and digits in \(Self.textLength / Self.groupLength) groups of \(Self.groupLength); this text has \(characters)")
        }
        do {
            try Base32.decode(typed) { byte in try decoded.append(byte) }
        } catch is Base32.DecodingError {
            throw .invalidArgument("a recovery key has only the letters A to Z and the digits 2 to 7; check what was typed")
        } catch {
            throw .limitExceeded("no secure memory left for the recovery key")
        }
        guard decoded.count == Self.keyLength + Self.checkLength else {
            throw .invalidArgument("this is not a recovery key as Coffer shows them: a character is wrong or missing; check it again")
        }
        let key = try CofferError.catching { try decoded.slice(0..<Self.keyLength) }
        let check = try Self.check(of: key)
        for index in 0..<Self.checkLength where decoded[Self.keyLength + index] != check[index] {
            throw .invalidArgument("this is not a recovery key as Coffer shows them: a character is wrong or missing; check it again")
        }
        bytes = key
    }

    /// The text to show: 8 groups of 4 characters joined by dashes, in secure memory.
    public func text() throws(CofferError) -> SecureBytes {
        try CofferError.catching {
            let whole = try SecureBytes(capacity: Self.keyLength + Self.checkLength)
            try whole.append(bytes)
            let check = try Self.check(of: bytes)
            for index in 0..<Self.checkLength { try whole.append(check[index]) }
            let text = try SecureBytes(capacity: Self.textLength + Self.textLength / Self.groupLength)
            var written = 0
            try Base32.encode(whole.view) { symbol in
                if written > 0, written.isMultiple(of: Self.groupLength) { try text.append(UInt8(ascii: "-")) }
                try text.append(symbol)
                written += 1
            }
            return text
        }
    }

    /// The check bytes of `key`: the start of its SHA-256.
    private static func check(of key: SecureBytes) throws(CofferError) -> SecureBytes {
        try CofferError.catching { try SecureDigest.hash(.sha256, key) }
    }
}
