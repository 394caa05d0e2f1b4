import CofferCrypto
import DBusKit

/// A secret as it travels on the bus, the `(oayays)` struct: the session it is encoded for, the
/// algorithm's parameters (the AES IV of a DH session, empty for `plain`), the value (plain or
/// encrypted) and its content type.
///
/// The value lives in secure memory from the moment it is read out of a message until it is
/// wiped (when the last reference goes); it is never an ordinary array on the way.
public struct WireSecret: DBusRepresentable, Hashable {
    public var session: ObjectPath
    public var parameters: [UInt8]
    public var value: SecureBytes
    public var contentType: String

    public init(session: ObjectPath, parameters: [UInt8], value: SecureBytes, contentType: String) {
        self.session = session
        self.parameters = parameters
        self.value = value
        self.contentType = contentType
    }

    public static var dbusType: Signature { "(oayays)" }

    /// The longest secret Coffer's server takes (256 KiB, what its store keeps: CofferCore's
    /// `Limits.maxSecretBytes`, which a test holds equal).
    public static let maxSecretBytes = 256 * 1024

    /// The longest value a server reads into secure memory: `maxSecretBytes` plus one block of
    /// padding. Longer values are refused before they are read.
    public static var secretLimit: Int? { maxSecretBytes + 16 }

    /// The longest value a client accepts in a reply: other providers store larger secrets
    /// than Coffer does, and a client must be able to read (then refuse to store) them.
    public static let replyLimit = 64 << 20

    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .structure(let fields) = dbusValue, fields.count == 4,
              case .objectPath(let session) = fields[0], case .string(let contentType) = fields[3] else {
            throw Self.typeMismatch(dbusValue)
        }
        switch fields[1] {
        case .bytes(let bytes): parameters = bytes
        case .secureBytes(let bytes): parameters = bytes.unprotectedArray(0..<bytes.count)   // an IV, not secret
        default: throw Self.typeMismatch(dbusValue)
        }
        guard case .secureBytes(let value) = fields[2] else {
            // Only a message read without the argument's secret limit has an ordinary array here.
            throw .failed("internal error: a secret was not read into secure memory")
        }
        self.session = session
        self.value = value
        self.contentType = contentType
    }

    public var dbusValue: DBusValue {
        .structure([.objectPath(session), .bytes(parameters), .secureBytes(value), .string(contentType)])
    }
}
