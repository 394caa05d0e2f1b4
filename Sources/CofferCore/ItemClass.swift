/// The Keychain item classes Coffer knows, each mapped onto the `xdg:schema` attribute that
/// libsecret clients use for the same purpose.
public enum ItemClass: String, CaseIterable, Sendable {
    case genericPassword = "generic"
    case internetPassword = "internet"
    /// A one-time-password secret (TOTP): its secret is the HMAC key, its parameters are
    /// attributes (see `OneTimePassword.attributes`).
    case oneTimePassword = "otp"

    /// The attribute name that carries the schema.
    public static let schemaAttribute = "xdg:schema"

    /// The `xdg:schema` value of this class.
    public var schema: String {
        switch self {
        case .genericPassword: "org.freedesktop.Secret.Generic"
        case .internetPassword: "org.gnome.keyring.NetworkPassword"
        case .oneTimePassword: "org.coffer.OneTimePassword"
        }
    }

    /// The class whose schema `attributes` carry, if any.
    public init?(attributes: Attributes) {
        guard let schema = attributes[Self.schemaAttribute],
              let match = Self.allCases.first(where: { $0.schema == schema }) else { return nil }
        self = match
    }
}
