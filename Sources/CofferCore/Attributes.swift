import CofferCrypto

/// Item attributes: names and values are UTF-8 strings, matched exactly and case-sensitively.
public typealias Attributes = [String: String]

/// The sizes the core accepts. Anything larger is rejected with `invalidArgument` before
/// anything is changed.
public enum Limits {
    public static let maxAttributes = 128
    public static let maxAttributeNameBytes = 256
    public static let maxAttributeValueBytes = 4096
    public static let maxLabelBytes = 4096
    public static let maxContentTypeBytes = 128
    public static let maxSecretBytes = 256 * 1024

    /// Checks attribute count, sizes and the absence of NUL characters.
    public static func validate(attributes: Attributes) throws(CofferError) {
        guard attributes.count <= maxAttributes else {
            throw .invalidArgument("more than \(maxAttributes) attributes")
        }
        for (name, value) in attributes {
            guard !name.isEmpty, name.utf8.count <= maxAttributeNameBytes, !name.utf8.contains(0) else {
                throw .invalidArgument("attribute names must be 1 to \(maxAttributeNameBytes) bytes without NUL")
            }
            guard value.utf8.count <= maxAttributeValueBytes, !value.utf8.contains(0) else {
                throw .invalidArgument("attribute '\(name)' value must be at most \(maxAttributeValueBytes) bytes without NUL")
            }
        }
    }

    /// Checks a label's size and the absence of NUL characters.
    public static func validate(label: String) throws(CofferError) {
        guard label.utf8.count <= maxLabelBytes, !label.utf8.contains(0) else {
            throw .invalidArgument("labels must be at most \(maxLabelBytes) bytes without NUL")
        }
    }

    /// Checks a secret's size and its content type.
    public static func validate(secret: Secret) throws(CofferError) {
        guard secret.bytes.count <= maxSecretBytes else {
            throw .invalidArgument("secrets must be at most \(maxSecretBytes) bytes")
        }
        guard secret.contentType.utf8.count <= maxContentTypeBytes, !secret.contentType.utf8.contains(0) else {
            throw .invalidArgument("content types must be at most \(maxContentTypeBytes) bytes without NUL")
        }
    }
}
