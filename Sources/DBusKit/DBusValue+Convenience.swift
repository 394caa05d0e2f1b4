import CofferCrypto

// Builders and accessors for the shapes the Secret Service uses most.

extension DBusValue {
    /// `a{ss}`, entries sorted by key (deterministic output).
    public static func stringDictionary(_ dict: [String: String]) -> DBusValue {
        .dictionary(keySignature: .string, valueSignature: .string,
                    dict.sorted { $0.key < $1.key }.map { DictionaryEntry(key: .string($0.key), value: .string($0.value)) })
    }

    /// `a{sv}`: each value is wrapped in a variant; entries sorted by key.
    public static func variantDictionary(_ dict: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: .string, valueSignature: .variant,
                    dict.sorted { $0.key < $1.key }.map { DictionaryEntry(key: .string($0.key), value: .variant($0.value)) })
    }

    /// `ao`.
    public static func objectPathArray(_ paths: [ObjectPath]) -> DBusValue {
        .array(elementSignature: .objectPath, paths.map { .objectPath($0) })
    }

    /// `as`.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(elementSignature: .string, strings.map { .string($0) })
    }

    // MARK: Accessors (nil when the value has another type)

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var objectPath: ObjectPath? { if case .objectPath(let p) = self { return p }; return nil }
    public var bool: Bool? { if case .boolean(let b) = self { return b }; return nil }
    public var uint32: UInt32? { if case .uint32(let v) = self { return v }; return nil }
    public var int32: Int32? { if case .int32(let v) = self { return v }; return nil }
    public var uint64: UInt64? { if case .uint64(let v) = self { return v }; return nil }
    public var int64: Int64? { if case .int64(let v) = self { return v }; return nil }

    /// The bytes of an `ay` (either `.bytes` or an `.array` of `.byte`).
    public var bytes: [UInt8]? {
        switch self {
        case .bytes(let b): return b
        case .array(let sig, let items) where sig == .byte:
            var out: [UInt8] = []
            out.reserveCapacity(items.count)
            for case .byte(let b) in items { out.append(b) }
            return out
        default: return nil
        }
    }

    /// The bytes of an `ay` read or built as a secret (`.secureBytes`); nil for anything else,
    /// so a secret is never turned into an ordinary array by accident.
    public var secureBytes: SecureBytes? { if case .secureBytes(let b) = self { return b }; return nil }

    /// The content of a variant.
    public var variantValue: DBusValue? { if case .variant(let v) = self { return v }; return nil }

    /// The fields of a structure.
    public var structureFields: [DBusValue]? { if case .structure(let f) = self { return f }; return nil }

    /// The elements of an array (for `ay` stored as `.bytes`, the bytes as `.byte` values).
    public var arrayElements: [DBusValue]? {
        switch self {
        case .array(_, let items): return items
        case .bytes(let b): return b.map { .byte($0) }
        default: return nil
        }
    }

    /// The entries of a dictionary.
    public var dictionaryEntries: [DictionaryEntry]? {
        if case .dictionary(_, _, let e) = self { return e }; return nil
    }

    /// An `as` as `[String]`.
    public var stringArray: [String]? {
        guard case .array(let sig, let items) = self, sig == .string else { return nil }
        return items.compactMap(\.string)
    }

    /// An `ao` as `[ObjectPath]`.
    public var objectPathArray: [ObjectPath]? {
        guard case .array(let sig, let items) = self, sig == .objectPath else { return nil }
        return items.compactMap(\.objectPath)
    }

    /// An `a{ss}` as a Swift dictionary (a repeated key keeps its last value).
    public var stringDictionary: [String: String]? {
        guard case .dictionary(let k, let v, let entries) = self, k == .string, v == .string else { return nil }
        var out: [String: String] = [:]
        for e in entries { if let key = e.key.string, let value = e.value.string { out[key] = value } }
        return out
    }

    /// An `a{sv}` as a Swift dictionary of the variants' contents (one level unwrapped).
    public var variantDictionary: [String: DBusValue]? {
        guard case .dictionary(let k, let v, let entries) = self, k == .string, v == .variant else { return nil }
        var out: [String: DBusValue] = [:]
        for e in entries { if let key = e.key.string, let value = e.value.variantValue { out[key] = value } }
        return out
    }
}
