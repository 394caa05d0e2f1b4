import SystemKit

/// The 1024-bit MODP "Second Oakley Group" of RFC 2409 (generator 2). Internal constants.
enum DHGroup {
    /// The prime p, 128 bytes big-endian.
    static let prime: [UInt8] = Hex.decode("""
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74
        020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437
        4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """)!

    /// p - 1 (the largest value a peer key must stay below).
    static let primeMinusOne: [UInt8] = {
        var bytes = prime
        bytes[bytes.count - 1] -= 1   // p ends in 0xFF, no borrow
        return bytes
    }()

    static let generator: [UInt8] = [2]
}
