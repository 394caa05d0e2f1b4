/// A Swift type that stands for one D-Bus type, so that method arguments, replies and
/// properties can be declared and handled as typed values instead of positional `DBusValue`s.
///
/// Decoding never traps: a value of another type is an `InvalidArgs` error naming what was
/// expected. Conformances here: `String`, `Bool`, `UInt32`, `Int32`, `UInt64`, `ObjectPath`,
/// `DBusVariant`, `UnixFileDescriptor`, arrays and dictionaries of conforming types.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type (one complete type).
    static var dbusType: Signature { get }
    /// For a type that carries a secret: the longest byte array it accepts, read straight into
    /// secure memory (see `ArgumentDescription.secretLimit`); nil for everything else.
    static var secretLimit: Int? { get }
    /// The value from a `DBusValue` of `dbusType`.
    init(dbusValue: DBusValue) throws(DBusError)
    /// The `DBusValue` this value is sent as.
    var dbusValue: DBusValue { get }
}

extension DBusRepresentable {
    public static var secretLimit: Int? { nil }

    /// The error for a value that is not a `Self`.
    public static func typeMismatch(_ value: DBusValue) -> DBusError {
        .invalidArgs("expected a value of type '\(dbusType)', got '\(value.signatureString)'")
    }
}

extension String: DBusRepresentable {
    public static var dbusType: Signature { .string }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let s) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = s
    }
    public var dbusValue: DBusValue { .string(self) }
}

extension Bool: DBusRepresentable {
    public static var dbusType: Signature { .boolean }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let b) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = b
    }
    public var dbusValue: DBusValue { .boolean(self) }
}

extension UInt8: DBusRepresentable {
    public static var dbusType: Signature { .byte }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let v) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = v
    }
    public var dbusValue: DBusValue { .byte(self) }
}

extension UInt32: DBusRepresentable {
    public static var dbusType: Signature { .uint32 }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let v) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = v
    }
    public var dbusValue: DBusValue { .uint32(self) }
}

extension Int32: DBusRepresentable {
    public static var dbusType: Signature { .int32 }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let v) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = v
    }
    public var dbusValue: DBusValue { .int32(self) }
}

extension UInt64: DBusRepresentable {
    public static var dbusType: Signature { .uint64 }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let v) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = v
    }
    public var dbusValue: DBusValue { .uint64(self) }
}

extension ObjectPath: DBusRepresentable {
    public static var dbusType: Signature { .objectPath }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let p) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = p
    }
    public var dbusValue: DBusValue { .objectPath(self) }
}

/// `v`: a value of any type, carrying its own signature.
public struct DBusVariant: DBusRepresentable, Hashable {
    /// What the variant holds.
    public var value: DBusValue

    public init(_ value: DBusValue) { self.value = value }

    public static var dbusType: Signature { .variant }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .variant(let inner) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        value = inner
    }
    public var dbusValue: DBusValue { .variant(value) }
}

/// `a<element>`; `[UInt8]` is sent as the compact `.bytes`.
extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusType: Signature { Signature(unchecked: "a" + Element.dbusType.rawValue) }
    public static var secretLimit: Int? { Element.secretLimit }

    public init(dbusValue: DBusValue) throws(DBusError) {
        switch dbusValue {
        case .array(let element, let items) where element == Element.dbusType:
            var out: [Element] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try Element(dbusValue: item)) }
            self = out
        case .bytes(let bytes) where Element.self == UInt8.self:
            self = bytes as! [Element]   // Element is UInt8: the cast cannot fail
        default:
            throw Self.typeMismatch(dbusValue)
        }
    }

    public var dbusValue: DBusValue {
        // (An empty array casts to any element type: test the type, not the value.)
        if Element.self == UInt8.self, let bytes = self as? [UInt8] { return .bytes(bytes) }
        // (A closure, not \.dbusValue: a key path in generic code is built anew on every call.)
        return .array(elementSignature: Element.dbusType, map { $0.dbusValue })
    }
}

/// `a{<key><value>}`, entries sent sorted by key (deterministic messages; string and object
/// path keys by their text, as `stringDictionary` does); a key received twice keeps its last
/// value.
extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    public static var dbusType: Signature {
        Signature(unchecked: "a{" + Key.dbusType.rawValue + Value.dbusType.rawValue + "}")
    }
    public static var secretLimit: Int? { Value.secretLimit }

    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(let k, let v, let entries) = dbusValue, k == Key.dbusType, v == Value.dbusType else {
            throw Self.typeMismatch(dbusValue)
        }
        var out: [Key: Value] = [:]
        out.reserveCapacity(entries.count)
        for entry in entries { out[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = out
    }

    public var dbusValue: DBusValue {
        // Each key's text is worked out once: printing a value is slow (reflection), and every
        // typed call and reply with a dictionary comes this way.
        let entries = map { (key: $0.key.dbusValue, value: $0.value.dbusValue) }
            .map { (text: Self.sortText($0.key), entry: DBusValue.DictionaryEntry(key: $0.key, value: $0.value)) }
            .sorted { $0.text < $1.text }
            .map { $0.entry }
        return .dictionary(keySignature: Key.dbusType, valueSignature: Value.dbusType, entries)
    }

    /// What entries are sorted by: a key's text (dictionary keys are basic values).
    private static func sortText(_ key: DBusValue) -> String {
        switch key {
        case .string(let text): text
        case .objectPath(let path): path.rawValue
        case .signature(let signature): signature.rawValue
        default: "\(key)"
        }
    }
}

/// `h`: a file descriptor passed with the message (see `UnixFileDescriptor` for who closes it).
extension UnixFileDescriptor: DBusRepresentable {
    public static var dbusType: Signature { .unixFD }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .unixFD(let descriptor) = dbusValue else { throw Self.typeMismatch(dbusValue) }
        self = descriptor
    }
    public var dbusValue: DBusValue { .unixFD(self) }
}
