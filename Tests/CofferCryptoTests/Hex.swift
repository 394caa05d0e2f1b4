import CofferCrypto
import SystemKit

/// Test helpers: known-answer vectors are written in hex.
func hex(_ digits: String) -> [UInt8] {
    guard let bytes = Hex.decode(digits) else { preconditionFailure("not hex: \(digits)") }
    return bytes
}

func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// All bytes of a SecureBytes as an ordinary array (tests only).
func plain(_ bytes: SecureBytes) -> [UInt8] { bytes.unprotectedArray(0..<bytes.count) }
