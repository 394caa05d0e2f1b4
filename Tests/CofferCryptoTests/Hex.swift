/// Test helpers: hex conversion.
func hex(_ string: String) -> [UInt8] {
    let digits = Array(string.utf8).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
    precondition(digits.count % 2 == 0, "odd hex length")
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: preconditionFailure("bad hex digit")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
    return String(decoding: out, as: UTF8.self)
}

import CofferCrypto

/// All bytes of a SecureBytes as an ordinary array (tests only).
func plain(_ bytes: SecureBytes) -> [UInt8] { bytes.unprotectedArray(0..<bytes.count) }
