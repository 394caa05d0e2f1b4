import CofferCrypto

/// The contents of one gnome-keyring keyring file (`~/.local/share/keyrings/<name>.keyring`),
/// in either of its formats: the encrypted binary one, or the unencrypted text one gnome-keyring
/// writes for a keyring with an empty password. Secrets are in secure memory.
public struct GnomeKeyring: Sendable {
    /// The keyring's label (its display name).
    public var label: String
    /// Seconds since 1970, 0 when unknown. The binary format's writer swaps these two (see
    /// `../shared/spec/secret-service.md` §12.2), so the earlier is taken as created.
    public var created: UInt64
    public var modified: UInt64
    public var items: [Item]

    public init(label: String, created: UInt64, modified: UInt64, items: [Item]) {
        self.label = label
        self.created = created
        self.modified = modified
        self.items = items
    }

    /// One item: what the Secret Service shows of it.
    public struct Item: Sendable {
        /// Its id in the keyring (the last element of its D-Bus path).
        public var id: UInt32
        public var label: String
        /// Every attribute, uint32 ones as decimal text, and `xdg:schema` set from the legacy
        /// item type when the file has none: what gnome-keyring shows over D-Bus (less its
        /// `gkr:compat:*` bookkeeping).
        public var attributes: [String: String]
        /// The attributes the file stored as uint32 (a writer stores them so again).
        public var uint32Attributes: Set<String>
        public var secret: SecureBytes
        public var created: UInt64
        public var modified: UInt64

        public init(id: UInt32, label: String, attributes: [String: String], uint32Attributes: Set<String> = [],
                    secret: SecureBytes, created: UInt64, modified: UInt64) {
            self.id = id
            self.label = label
            self.attributes = attributes
            self.uint32Attributes = uint32Attributes
            self.secret = secret
            self.created = created
            self.modified = modified
        }

        /// The schema (`xdg:schema`).
        public var schema: String { attributes[GnomeKeyring.schemaAttribute] ?? ItemType.generic.schema }
    }

    public static let schemaAttribute = "xdg:schema"

    /// gnome-keyring's legacy item types and the schemas they stand for.
    public enum ItemType: UInt32, CaseIterable, Sendable {
        case generic = 0, networkPassword = 1, note = 2, chainedKeyring = 3, encryptionKey = 4, pkStorage = 0x100

        public var schema: String {
            switch self {
            case .generic: "org.freedesktop.Secret.Generic"
            case .networkPassword: "org.gnome.keyring.NetworkPassword"
            case .note: "org.gnome.keyring.Note"
            case .chainedKeyring: "org.gnome.keyring.ChainedKeyring"
            case .encryptionKey: "org.gnome.keyring.EncryptionKey"
            case .pkStorage: "org.gnome.keyring.PkStorage"
            }
        }

        /// The type a file stores for `schema` (generic for schemas it has no number for).
        public init(schema: String) {
            self = Self.allCases.first { $0.schema == schema } ?? .generic
        }

        /// Sets `xdg:schema` from a stored type number (its low 16 bits; unknown ones are
        /// generic) when the attributes have none, as gnome-keyring does when it loads a file.
        static func recordSchema(ofStored type: UInt32, in attributes: inout [String: String]) {
            guard attributes[GnomeKeyring.schemaAttribute] == nil else { return }
            attributes[GnomeKeyring.schemaAttribute] = (ItemType(rawValue: type & 0xFFFF) ?? .generic).schema
        }
    }
}

/// Why a keyring file could not be read. Messages name what is wrong, never a secret.
public enum GnomeKeyringFileError: Error, Equatable, CustomStringConvertible {
    /// Neither format: not a keyring file at all.
    case notAKeyring
    /// A binary keyring of a version or algorithm this reader does not know.
    case unsupportedFormat(String)
    /// The password does not decrypt the file (or the encrypted part was altered).
    case wrongPassword
    /// The file is damaged or cut short: the text says where.
    case damaged(String)
    /// An encrypted keyring was read without a password.
    case passwordNeeded
    /// Its secrets do not fit in the secure memory left.
    case outOfSecureMemory

    public var description: String {
        switch self {
        case .notAKeyring: "this is not a gnome-keyring keyring file (neither its binary format nor its text format)"
        case .unsupportedFormat(let what): "this keyring file uses \(what), which Coffer cannot read"
        case .wrongPassword: "the password does not open this keyring (or its encrypted part is damaged)"
        case .damaged(let what): "the keyring file is damaged: \(what)"
        case .passwordNeeded: "this keyring is encrypted: its password is needed"
        case .outOfSecureMemory: "its secrets do not fit in the secure memory left; close other programs using it, or raise the locked-memory limit (ulimit -l)"
        }
    }
}
