import CofferCrypto

/// A one-time password kept as an item of class `otp`: the secret is the HMAC key itself; the
/// issuer (`service`), the account and the parameters are attributes, so items are found (and
/// listed while locked) without the key.
extension OneTimePassword {
    public static let algorithmAttribute = "otp:algorithm"
    public static let digitsAttribute = "otp:digits"
    public static let periodAttribute = "otp:period"

    /// The attributes of the item holding this password for `service` and `account`.
    public func attributes(service: String, account: String) -> Attributes {
        [ItemClass.schemaAttribute: ItemClass.oneTimePassword.schema, "service": service, "account": account,
         Self.algorithmAttribute: algorithm.rawValue, Self.digitsAttribute: String(digits), Self.periodAttribute: String(period)]
    }

    /// The password an `otp` item holds: its secret and the parameters in `attributes`
    /// (SHA-1, 6 digits, 30 seconds where one is missing, as authenticator apps assume).
    public init(item attributes: Attributes, secret: SecureBytes) throws(CofferError) {
        let algorithm = try attributes[Self.algorithmAttribute].map { (name: String) throws(CofferError) -> Algorithm in
            guard let value = Algorithm(rawValue: name.uppercased()) else {
                throw .invalidArgument("the item's \(Self.algorithmAttribute) is '\(name)', not SHA1, SHA256 or SHA512")
            }
            return value
        } ?? .sha1
        func number(_ name: String, default fallback: Int) throws(CofferError) -> Int {
            guard let text = attributes[name] else { return fallback }
            guard let value = Int(text) else { throw .invalidArgument("the item's \(name) is '\(text)', not a number") }
            return value
        }
        try self.init(secret: secret, algorithm: algorithm, digits: try number(Self.digitsAttribute, default: 6),
                      period: try number(Self.periodAttribute, default: 30))
    }
}
