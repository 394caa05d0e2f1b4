import CofferCore
import CofferCrypto

/// A collection's data key while it is unlocked: the key bytes (in secure memory, needed to
/// re-seal the header on a password change) and a cipher that keeps its key schedule ready
/// for the many records it seals and opens.
package struct DataKey {
    let bytes: SecureBytes
    let cipher: AESGCMKey

    package init(_ bytes: SecureBytes) throws(CofferError) {
        self.bytes = bytes
        cipher = try CofferError.catching { try AESGCMKey(bytes) }
    }
}
