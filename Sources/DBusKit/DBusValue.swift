import CofferCrypto

/// One D-Bus value, with everything needed to know its exact type signature.
///
/// Containers carry their element types explicitly, so empty arrays and dictionaries keep a
/// precise signature. `bytes` is the compact form of `ay`: values read from a message always use
/// it for byte arrays (never `.array(elementSignature: "y", …)`), and `.bytes` is what you should
/// build too. `secureBytes` is an `ay` kept in locked secure memory: a secret or password on
/// its way to or from the wire (see `ArgumentDescription.secretLimit`); it is never copied into
/// an ordinary array and is wiped when the last reference goes. `unixFD` is a file descriptor
/// passed with the message, closed when the last reference goes (see `UnixFileDescriptor`).
///
/// Convenience constructors (`.stringDictionary`, `.variantDictionary`, `.objectPathArray`, …) and
/// accessors (`value.string`, `value.objectPath`, `value.variantDictionary`, …) live in
/// `DBusValue+Convenience.swift`.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    /// `a<element>`; every element must have signature `elementSignature` (a single complete type).
    case array(elementSignature: Signature, [DBusValue])
    /// `ay`, stored compactly.
    case bytes([UInt8])
    /// `ay` holding a secret, in secure memory.
    case secureBytes(SecureBytes)
    /// `a{<key><value>}`; `keySignature` must be a basic type. Entry order is kept.
    case dictionary(keySignature: Signature, valueSignature: Signature, [DictionaryEntry])
    /// `(…)` with at least one field.
    case structure([DBusValue])
    /// `v`: a value carrying its own signature.
    case variant(DBusValue)
    /// `h`: a Unix file descriptor, owned by the `UnixFileDescriptor` (closed when the last
    /// value holding it goes, or by its `close()`).
    case unixFD(UnixFileDescriptor)

    /// One key/value pair of a `dictionary`.
    public struct DictionaryEntry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue
        public init(key: DBusValue, value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The signature of this value as text (a single complete type if the value is valid).
    public var signatureString: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .array(let element, _): return "a" + element.rawValue
        case .bytes, .secureBytes: return "ay"
        case .dictionary(let k, let v, _): return "a{" + k.rawValue + v.rawValue + "}"
        case .structure(let fields): return "(" + fields.map(\.signatureString).joined() + ")"
        case .variant: return "v"
        case .unixFD: return "h"
        }
    }

    /// The signature of this value. Throws `invalidArgs` only for malformed values (for example
    /// an empty structure, or nesting beyond the D-Bus limits).
    public func signature() throws(DBusError) -> Signature {
        try Signature(signatureString)
    }

    /// The signature of a sequence of values (a message body).
    public static func signature(of values: [DBusValue]) throws(DBusError) -> Signature {
        try Signature(values.map(\.signatureString).joined())
    }
}
