/// A secret value in secure memory, with the MIME type its owner gave it: what the store keeps
/// and what a Secret Service client receives.
public struct Secret: Sendable {
    public let bytes: SecureBytes
    public let contentType: String

    /// `text/plain` unless said otherwise: what secret-tool and most clients store.
    public init(bytes: SecureBytes, contentType: String = "text/plain") {
        self.bytes = bytes
        self.contentType = contentType
    }
}
